import { readFileSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from './http/errors.js';

// Node's parser skips a line it cannot read without a word: every line is checked first.
const ACCEPTED_LINE = /^\s*(#.*|(export\s+)?[A-Za-z_][A-Za-z0-9_]*=.*)?$/;

/**
 * The process's environment over the working folder's `.env`, if any (a variable already set wins).
 * Its text is never repeated in a message: it may hold passwords.
 */
export function processEnvironment(): NodeJS.ProcessEnv {
  const file = path.resolve('.env');
  try {
    const wrong = readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .findIndex((line) => !ACCEPTED_LINE.test(line));
    if (wrong !== -1)
      throw new StartupError(
        `${file}, line ${wrong + 1}: expected NAME=value, a # comment or a blank line`,
      );
    process.loadEnvFile(file);
  } catch (error) {
    if (error instanceof StartupError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StartupError(`${file} cannot be read: ${(error as Error).message}`);
  }
  return process.env;
}
