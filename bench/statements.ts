import type { NotesConfig } from '../server/shared/config.js';
import type pg from 'pg';
import { captureLogs } from '../harness/logs.js';
import { startService } from '../harness/service.js';
import { createDatabase } from '../server/shared/database.js';
import type { ServiceDescriptor, NotesDeps } from '../server/shared/service.js';
import { measureWork, type LoadResult, type Timing } from './load.js';

/**
 * The database limit: the SQL each request really issues, recorded from the service's own code
 * (its app runs here, on the benchmark's database, with a pool like the server's that logs every
 * statement, text and values in order, at `trace`), replayed through a pg Pool without HTTP.
 */

interface Statement {
  text: string;
  values: unknown[];
}

type Slot = { statement: number; value: number };

/**
 * Statements of one request; `idSlots` are the values that carry the note's id, `deadlineSlots`
 * the moment a write's client stops waiting (`Database.write`), stamped anew at each replay.
 */
export interface StatementTemplate {
  statements: Statement[];
  idSlots: Slot[];
  deadlineSlots: Slot[];
}

/** How a write's deadline reads in the log: a Date, serialized. */
const isTimestamp = (value: unknown) => typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value);
/** Far enough that no replayed write is refused by its fence. */
const REPLAY_DEADLINE_MS = 60_000;

export type StatementRecorder = Awaited<ReturnType<typeof startStatementRecorder>>;

export async function startStatementRecorder(
  descriptor: ServiceDescriptor<NotesDeps>,
  url: string,
  settings: { poolMax: number; timeoutMs: number; notes: NotesConfig },
) {
  const statements = captureLogs('trace');
  const { poolMax, timeoutMs, notes } = settings;
  const db = createDatabase({ url, schema: descriptor.database!.schema, poolMax, timeoutMs, logger: statements.logger });
  const service = await startService(descriptor, { deps: { config: notes }, db, logLevel: 'warn' }).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });

  const request = async (method: string, path: string, json?: unknown) => {
    statements.clear();
    const reply = await service.request(method, path, { json });
    if (reply.status >= 300) throw new Error(`${descriptor.name} ${method} ${path} answered ${reply.status}: ${reply.text}`);
    return {
      sent: statements.lines.filter((line) => line.msg === 'statement').map((line) => ({ text: line.sql as string, values: line.values as unknown[] })),
      id: (reply.json as { id?: number } | undefined)?.id,
    };
  };
  return {
    /**
     * Makes the request twice, for two different notes, and keeps what the first sent, with the
     * values that differ marked as the id; `created`: the ids the answers name.
     */
    async record(method: string, paths: [string, string], json?: unknown) {
      const first = await request(method, paths[0], json);
      const second = await request(method, paths[1], json);
      return { template: templateOf(`${method} ${paths[0]}`, first.sent, second.sent), created: [first.id!, second.id!] };
    },
    async close() {
      await service.close();
      await db.close();
    },
  };
}

function templateOf(request: string, first: Statement[], second: Statement[]): StatementTemplate {
  const same =
    first.length === second.length &&
    first.every((statement, index) => statement.text === second[index]!.text && statement.values.length === second[index]!.values.length);
  if (!same) throw new Error(`${request} sends different statements for different notes; cannot replay it`);
  const differing = first.flatMap((statement, index) =>
    statement.values.flatMap((value, slot) => (value === second[index]!.values[slot] ? [] : [{ statement: index, value: slot }])),
  );
  const isDeadline = (slot: Slot) => isTimestamp(first[slot.statement]!.values[slot.value]);
  return { statements: first, idSlots: differing.filter((slot) => !isDeadline(slot)), deadlineSlots: differing.filter(isDeadline) };
}

/** The template's statements for the note `id` (unchanged for requests that name no note). */
export function statementsFor(template: StatementTemplate, id?: number): Statement[] {
  const { idSlots, deadlineSlots } = template;
  if ((id === undefined || idSlots.length === 0) && deadlineSlots.length === 0) return template.statements;
  const statements = template.statements.map(({ text, values }) => ({ text, values: [...values] }));
  if (id !== undefined) {
    for (const slot of idSlots) {
      const recorded = statements[slot.statement]!.values[slot.value];
      statements[slot.statement]!.values[slot.value] = typeof recorded === 'string' ? String(id) : id;
    }
  }
  const deadline = new Date(Date.now() + REPLAY_DEADLINE_MS);
  for (const slot of deadlineSlots) statements[slot.statement]!.values[slot.value] = deadline;
  return statements;
}

/** Sends each request's statements in order, each on a pooled connection, as the service's store does. */
export function databaseLimit(pool: pg.Pool, nextRequest: () => Statement[], concurrency: number, timing: Timing): Promise<LoadResult> {
  return measureWork(
    async () => {
      for (const statement of nextRequest()) await pool.query(statement);
    },
    concurrency,
    timing,
  );
}
