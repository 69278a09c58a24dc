import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES, loadConfig } from '../server/config.js';

// docs/configuration.md documents every environment variable the configuration module reads, in
// the table of its "## Variables" section: the first cell of each row holds one name in
// backquotes, or several joined by " / " (`NOTES8080_HOST` / `NOTES8080_PORT`). .env.example lists
// the same variables, each commented out (`# NAME=default`) under a comment of its own, so that a
// copy of it as `.env` sets nothing until a line is uncommented. The names read are those of the
// module's own validated schema, so neither side can change without the other.

const read = (file: string) => readFileSync(path.resolve(import.meta.dirname, '..', file), 'utf8');
const lines = read('docs/configuration.md').split('\n');
const start = lines.indexOf('## Variables');
const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
/** The first cell of every row of the section's table (after the header and separator rows). */
const cells = lines
  .slice(start + 1, end === -1 ? undefined : end)
  .filter((line) => line.startsWith('|'))
  .slice(2)
  .map((row) => row.split('|')[1]!.trim());
const exampleLines = read('.env.example').split('\n');
const examples = exampleLines.flatMap((line) => {
  const assignment = /^# ([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
  return assignment ? [[assignment[1]!, assignment[2]!] as const] : [];
});

describe.each([
  ['docs/configuration.md', cells.flatMap((cell) => cell.match(/(?<=`)[A-Z0-9_]+(?=`)/g) ?? [])],
  ['.env.example', examples.map(([name]) => name)],
])('%s', (_, names) => {
  it('names each variable once, every variable the configuration module reads, no other', () => {
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    expect(names.filter((name) => !ENVIRONMENT_VARIABLES.includes(name))).toEqual([]);
    expect(ENVIRONMENT_VARIABLES.filter((name) => !names.includes(name))).toEqual([]);
  });
});

it('docs/configuration.md has a table of variables, each row naming them in backquotes', () => {
  expect(start).toBeGreaterThan(-1);
  expect(cells.length).toBeGreaterThan(0);
  const nameCell = /^`[A-Z][A-Z0-9_]*`( \/ `[A-Z][A-Z0-9_]*`)*$/;
  expect(cells.filter((cell) => !nameCell.test(cell))).toEqual([]);
  // The names come from the module itself.
  expect(ENVIRONMENT_VARIABLES).toContain('DATABASE_URL');
  expect(ENVIRONMENT_VARIABLES.length).toBeGreaterThan(30);
});

it('.env.example sets nothing as it is, and shows each default', () => {
  expect(exampleLines.filter((line) => line.trim() !== '' && !line.startsWith('#'))).toEqual([]);
  // Uncommented as it is, it configures what no variable at all does.
  expect(loadConfig(Object.fromEntries(examples))).toEqual(loadConfig({}));
});
