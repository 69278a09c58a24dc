import { readFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from './http/errors.js';

/**
 * A line of `.env` as accepted: blank, a `#` comment, or one `NAME=value` (`export NAME=value`
 * too), nothing between the name and the `=`, as a shell reads it.
 */
const ACCEPTED_LINE = /^\s*(#.*|(export\s+)?[A-Za-z_][A-Za-z0-9_]*=.*)?$/;

/**
 * The environment the process reads its configuration from: its own, over the variables of the
 * working folder's `.env` when there is one. Node's process.loadEnvFile sets only the variables
 * the environment does not already have, so a variable set there (even empty) wins. Node's
 * parser skips a line it cannot read without a word, so the file is checked line by line first:
 * a file that cannot be read, or holds a line that is no assignment, stops the start with one
 * line, which never repeats the file's text (it may hold passwords).
 */
export function processEnvironment(): NodeJS.ProcessEnv {
  const file = path.resolve('.env');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return process.env;
    throw unreadable(file, error);
  }
  const wrong = text.split(/\r?\n/).findIndex((line) => !ACCEPTED_LINE.test(line));
  if (wrong !== -1)
    throw new StartupError(
      `${file}, line ${wrong + 1}: expected NAME=value, a # comment or a blank line`,
    );
  try {
    process.loadEnvFile(file);
  } catch (error) {
    throw unreadable(file, error);
  }
  return process.env;
}

const unreadable = (file: string, error: unknown) =>
  new StartupError(`${file} cannot be read: ${(error as Error).message}`);
