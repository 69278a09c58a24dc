import type { DatabaseConfig } from '../server/shared/config.js';
import { createDatabase } from '../server/shared/database.js';
import { createLogger } from '../server/shared/logger.js';
import { listen } from '../server/shared/serve.js';
import type { Statement } from './limits.js';
import { EDITED_TITLE, noteJson, type NotesService } from './notesServices.js';

/**
 * The SQL each notes request really issues, recorded from the service's own code: its app runs
 * here on a Knex pool like the server's, and every statement it sends (Knex's `query` event: text
 * and values, in order) is recorded per request. The database limit replays exactly these.
 */

export type NotesOperation = 'list' | 'show' | 'update' | 'create' | 'delete';

/** Statements of one request; `idSlots` are the values that carry the note's id. */
export interface StatementTemplate {
  statements: Statement[];
  idSlots: { statement: number; value: number }[];
}

/** Records what the service's requests send; `close` when done with it. */
export interface StatementRecorder {
  /** Each operation's statements, for the notes `existingIds` (the table must hold them). */
  operations(existingIds: [number, number]): Promise<Record<NotesOperation, StatementTemplate>>;
  /** The list's statements on the table as it is now: the list reads in batches, their number grows with the table. */
  list(): Promise<StatementTemplate>;
  close(): Promise<void>;
}

export async function startStatementRecorder(
  service: NotesService,
  databaseUrl: string,
  databaseConfig: DatabaseConfig,
): Promise<StatementRecorder> {
  const db = createDatabase(databaseUrl, service.schema, databaseConfig);
  let recorded: Statement[] = [];
  db.on('query', (query: { sql: string; bindings?: unknown[] }) => {
    recorded.push({ text: query.sql, values: [...(query.bindings ?? [])] });
  });
  const app = service.createApp({ db, bodyLimitBytes: 1024 * 1024, logger: createLogger('silent') });
  const server = await listen(app, { host: '127.0.0.1', port: 0 });

  const request = async (method: string, path: string, body?: string) => {
    recorded = [];
    const response = await fetch(`${server.url}${path}`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : undefined,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${service.name} ${method} ${path} answered ${response.status}: ${text}`);
    return { statements: recorded, json: text ? (JSON.parse(text) as { id?: number }) : undefined };
  };
  // Each request is made twice, for two different notes: the values that differ carry the id.
  const twice = async (method: string, paths: [string, string], body?: string) => {
    const first = await request(method, paths[0], body);
    const second = await request(method, paths[1], body);
    return { template: templateOf(`${method} ${paths[0]}`, first.statements, second.statements), created: [first.json?.id, second.json?.id] };
  };
  const list = async () => (await twice('GET', ['/notes', '/notes'])).template;

  return {
    list,
    async operations([a, b]) {
      const show = await twice('GET', [`/notes/${a}`, `/notes/${b}`]);
      const update = await twice('PUT', [`/notes/${a}`, `/notes/${b}`], noteJson(service, EDITED_TITLE));
      const create = await twice('POST', ['/notes', '/notes'], noteJson(service));
      const remove = await twice('DELETE', [`/notes/${create.created[0]}`, `/notes/${create.created[1]}`]);
      return { list: await list(), show: show.template, update: update.template, create: create.template, delete: remove.template };
    },
    async close() {
      await server.close();
      await db.destroy();
    },
  };
}

function templateOf(request: string, first: Statement[], second: Statement[]): StatementTemplate {
  const same =
    first.length === second.length &&
    first.every((statement, index) => statement.text === second[index]!.text && statement.values.length === second[index]!.values.length);
  if (!same) throw new Error(`${request} sends different statements for different notes; cannot replay it`);
  const idSlots = first.flatMap((statement, index) =>
    statement.values.flatMap((value, slot) => (value === second[index]!.values[slot] ? [] : [{ statement: index, value: slot }])),
  );
  return { statements: first, idSlots };
}

/** The template's statements for the note `id` (unchanged for requests that name no note). */
export function statementsFor(template: StatementTemplate, id?: number): Statement[] {
  if (id === undefined || template.idSlots.length === 0) return template.statements;
  const statements = template.statements.map(({ text, values }) => ({ text, values: [...values] }));
  for (const slot of template.idSlots) {
    const recorded = statements[slot.statement]!.values[slot.value];
    statements[slot.statement]!.values[slot.value] = typeof recorded === 'string' ? String(id) : id;
  }
  return statements;
}
