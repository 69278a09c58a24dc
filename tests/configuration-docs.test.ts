import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../server/shared/config.js';

// docs/configuration.md documents every environment variable the configuration module reads, in
// the table of its "## Variables" section: the first cell of each row holds one name in
// backquotes, or several joined by " / " (`NOTES8080_HOST` / `NOTES8080_PORT`). The names read
// are those of the module's own validated schema, so neither side can change without the other.

const DOCUMENT = path.resolve(import.meta.dirname, '../docs/configuration.md');
const SECTION = '## Variables';
const NAME_CELL = /^`[A-Z][A-Z0-9_]*`( \/ `[A-Z][A-Z0-9_]*`)*$/;

/** The first cell of every row of the section's table, as written. */
function firstCells(markdown: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(SECTION);
  if (start === -1) throw new Error(`docs/configuration.md has no "${SECTION}" heading`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  const rows = lines.slice(start + 1, end === -1 ? undefined : end).filter((line) => line.startsWith('|'));
  // The header row and the separator row come first.
  return rows.slice(2).map((row) => row.split('|')[1]!.trim());
}

const documentedCells = firstCells(readFileSync(DOCUMENT, 'utf8'));
const documented = documentedCells.flatMap((cell) => [...cell.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1]!));

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
