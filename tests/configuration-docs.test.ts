import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES, loadConfig } from '../server/config.js';

// docs/configuration.md documents every environment variable the configuration module reads, in
// the table of its "## Variables" section: the first cell of each row holds one name in
// backquotes, or several joined by " / " (`NOTES8080_HOST` / `NOTES8080_PORT`). The names read
// are those of the module's own validated schema, so neither side can change without the other.

const DOCUMENT = path.resolve(import.meta.dirname, '../docs/configuration.md');
const EXAMPLE = path.resolve(import.meta.dirname, '../.env.example');
const SECTION = '## Variables';
const NAME_CELL = /^`[A-Z][A-Z0-9_]*`( \/ `[A-Z][A-Z0-9_]*`)*$/;

/** The first cell of every row of the section's table, as written. */
function firstCells(markdown: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(SECTION);
  if (start === -1) throw new Error(`docs/configuration.md has no "${SECTION}" heading`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  const rows = lines
    .slice(start + 1, end === -1 ? undefined : end)
    .filter((line) => line.startsWith('|'));
  // The header row and the separator row come first.
  return rows.slice(2).map((row) => row.split('|')[1]!.trim());
}

const documentedCells = firstCells(readFileSync(DOCUMENT, 'utf8'));
const documented = documentedCells.flatMap((cell) =>
  [...cell.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1]!),
);

describe('docs/configuration.md', () => {
  it('has a table of variables, each row naming them in backquotes', () => {
    expect(documentedCells.length).toBeGreaterThan(0);
    expect(documentedCells.filter((cell) => !NAME_CELL.test(cell))).toEqual([]);
  });

  it('documents each variable once', () => {
    expect(documented.filter((name, index) => documented.indexOf(name) !== index)).toEqual([]);
  });

  it('documents only variables the configuration module reads', () => {
    expect(documented.filter((name) => !ENVIRONMENT_VARIABLES.includes(name))).toEqual([]);
  });

  it('documents every variable the configuration module reads', () => {
    expect(ENVIRONMENT_VARIABLES.filter((name) => !documented.includes(name))).toEqual([]);
  });

  it('knows the variables from the module itself', () => {
    expect(ENVIRONMENT_VARIABLES).toContain('DATABASE_URL');
    expect(ENVIRONMENT_VARIABLES.length).toBeGreaterThan(30);
  });
});

// .env.example lists the same variables, each commented out (`# NAME=default`) under a comment of
// its own, so that a copy of it as `.env` sets nothing until a line is uncommented.

const exampleLines = readFileSync(EXAMPLE, 'utf8').split('\n');
const examples = exampleLines.flatMap((line) => {
  const assignment = /^# ([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
  return assignment ? [{ name: assignment[1]!, value: assignment[2]! }] : [];
});
const listed = examples.map(({ name }) => name);

describe('.env.example', () => {
  it('lists each variable once', () => {
    expect(listed.filter((name, index) => listed.indexOf(name) !== index)).toEqual([]);
  });

  it('lists only variables the configuration module reads', () => {
    expect(listed.filter((name) => !ENVIRONMENT_VARIABLES.includes(name))).toEqual([]);
  });

  it('lists every variable the configuration module reads', () => {
    expect(ENVIRONMENT_VARIABLES.filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('sets nothing as it is: every line is a comment or blank', () => {
    expect(exampleLines.filter((line) => line.trim() !== '' && !line.startsWith('#'))).toEqual([]);
  });

  it('shows each default: uncommented as it is, it configures what no variable at all does', () => {
    const values = Object.fromEntries(examples.map(({ name, value }) => [name, value]));
    expect(loadConfig(values)).toEqual(loadConfig({}));
  });
});
