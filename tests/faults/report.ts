import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { FULL } from './scale.js';

const FILE = path.resolve(import.meta.dirname, '../../docs/reliability.md');
const LOCK = `${FILE}.lock`;
const DATA_MARK = '<!-- rows: ';

export interface Row {
  /** Stable key; also orders the table (e.g. "1a outage"). */
  key: string;
  case: string;
  done: string;
  expected: string;
  observed: string;
  pass: boolean;
}

interface StoredRow extends Row {
  date: string;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return (
    `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} ` +
    `GiB RAM, Node ${process.version}, ${os.type()} ${os.release()}`
  );
}

/**
 * Puts one case's row into docs/reliability.md (full run only). The test files run in parallel
 * processes, so each one merges its rows into the file under a lock directory; rows from
 * other cases are kept as they are.
 */
export function report(row: Row): void {
  if (!row.pass) console.error(`${row.case} failed. Observed: ${row.observed}`);
  if (!FULL) return;
  withLock(() => {
    const rows = readRows();
    rows.set(row.key, {
      ...row,
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    });
    writeFileSync(
      FILE,
      render(
        [...rows.values()].sort((a, b) => a.key.localeCompare(b.key, 'en', { numeric: true })),
      ),
    );
  });
}

function readRows(): Map<string, StoredRow> {
  let text: string;
  try {
    text = readFileSync(FILE, 'utf8');
  } catch {
    return new Map();
  }
  const start = text.indexOf(DATA_MARK);
  if (start === -1) return new Map();
  const json = text.slice(start + DATA_MARK.length, text.indexOf(' -->', start));
  const rows = JSON.parse(json) as StoredRow[];
  return new Map(rows.map((row) => [row.key, row]));
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');

function render(rows: StoredRow[]): string {
  const failed = rows.filter((row) => !row.pass).length;
  return [
    '# Reliability',
    '',
    'Faults, hostile input and load: what the full form of `tests/faults/`',
    '(`FAULTS_FULL=1 npm run test:faults`) did to the three services, what it expected and what it',
    'saw. The full run rewrites this file; `npm run test:faults` alone runs the same tests ' +
      'with smaller',
    'numbers and writes nothing. The files that measure time, memory or load run one at a time, ' +
      'the',
    'others two at a time, so throughput figures are lower than on an idle machine. ' +
      'A SIGKILL and a',
    'restart over the stale embedded database are covered by `tests/faults/npmStart.test.ts`.',
    '',
    `Machine: ${machine()}.`,
    `Last written: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} ` +
      `UTC. ${rows.length} rows, ${failed} failed.`,
    '',
    '| Case | What was done | Expected | Observed | Result | Run |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${cell(row.case)} | ${cell(row.done)} | ${cell(row.expected)} ` +
        `| ${cell(row.observed)} | ${row.pass ? 'pass' : '**FAIL**'} | ${row.date} |`,
    ),
    '',
    `${DATA_MARK}${JSON.stringify(rows).replace(/-->/g, '--\\u003e')} -->`,
    '',
  ].join('\n');
}

function withLock(work: () => void) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // A lock older than the deadline was left by a killed run: take it over.
      if (Date.now() > deadline) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Named yes/no findings of one case: the row's result and the test's assertions both come from
 * them.
 */
export type Checks = Record<string, boolean>;

export const passed = (checks: Checks) => Object.values(checks).every(Boolean);

/** Fails the test naming every check that did not hold. */
export function expectChecks(checks: Checks): void {
  expect(
    Object.entries(checks)
      .filter(([, ok]) => !ok)
      .map(([name]) => name),
  ).toEqual([]);
}
