import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listenOnFreePort } from '../../harness/http.js';
import { ROOT, runUntilExit } from '../../harness/processes.js';
import { removeDataDir, temporaryDataDir } from '../../harness/postgres.js';
import { postgresUrl } from '../support/services.js';

// A start that cannot work ends at once with exit 1 and one line a person can act on: what is
// wrong and where, never a stack, never a secret.

// What a .env that cannot be used makes of a start is in commands.test.ts, beside the .env that
// every command reads.

let dataDir: string;
beforeAll(async () => {
  await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
  dataDir = await temporaryDataDir();
});
afterAll(() => removeDataDir(dataDir));

/** The compiled server's start with `env`, in `cwd`: how it ended and what it printed. */
const run = (env: Record<string, string>, cwd = ROOT) =>
  runUntilExit({ dataDir, env, form: 'compiled', cwd });
const STACK = /\n\s+at /;

describe('start-up errors a person can read', () => {
  test(
    'invalid variables: one line each (name, value, ' + 'what is expected), secrets not repeated',
    async () => {
      const result = await run({
        NOTES8080_PORT: 'eighty',
        DB_POOL_MAX: '0',
        LOG_LEVEL: 'loud',
        AUTH_ADMIN_PASSWORD: 'secret-value',
        PASSWORD_HASH_COST: '1000',
      });
      expect(result.code).toBe(1);
      expect(result.output.trim().split('\n').sort()).toEqual([
        'DB_POOL_MAX="0" is not valid: expected a whole number, at least 1',
        'LOG_LEVEL="loud" is not valid: expected one of ' +
          'fatal, error, warn, info, debug, trace, silent',
        'NOTES8080_PORT="eighty" is not valid: expected a port number from 0 to 65535',
        'PASSWORD_HASH_COST="1000" is not valid: expected a power of two',
      ]);
    },
  );

  test(
    'a DATABASE_URL naming a missing database ' + 'fails in under 5 s, its password unsaid',
    async () => {
      const url = new URL(postgresUrl());
      url.pathname = '/no_such_database';
      const result = await run({ DATABASE_URL: url.toString() });
      expect(result.code).toBe(1);
      expect(result.ms).toBeLessThan(5_000);
      expect(result.output.split('\n').filter((line) => line && !line.startsWith('{'))).toEqual([
        expect.stringMatching(
          /^Cannot use the database no_such_database at 127\.0\.0\.1:\d+ \(DATABASE_URL\): database "no_such_database" does not exist$/,
        ),
      ]);
      expect(result.output).not.toMatch(STACK);
      expect(result.output).not.toContain(url.password || 'no password');
    },
  );

  test(
    'an address in use names the service, the ' +
      'address and its variables; none announces itself',
    async () => {
      const busy = net.createServer();
      const port = await listenOnFreePort(busy, '127.0.0.1');
      const result = await run({ DATABASE_URL: '', NOTES8000_PORT: String(port) });
      busy.close();
      expect(result.code).toBe(1);
      expect(result.output).toContain(
        `notes8000 cannot listen on 127.0.0.1:${port} (NOTES8000_HOST, NOTES8000_PORT): ` +
          'the address is already in use',
      );
      expect(result.output).not.toContain('listening on');
      expect(result.output).not.toMatch(STACK);
    },
  );

  test('production mode with a weak password refuses in one line naming the variable', async () => {
    const env = { NODE_ENV: 'production', AUTH_ADMIN_PASSWORD: 'a-long-secret-2' };
    expect(
      await run({ DATABASE_URL: '', AUTH_USER_PASSWORD: 'admin-password', ...env }),
    ).toMatchObject({
      code: 1,
      output:
        'AUTH_USER_PASSWORD is a documented default ' +
        'password: production mode needs one of your own\n',
    });
  });

  test('SPA_MODE=prebuilt without a build: one line saying to build', async () => {
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'no-build-'));
    try {
      for (const entry of ['package.json', 'dist/builds', 'dist/server'])
        await fs.cp(path.join(ROOT, entry), path.join(copy, entry), {
          recursive: true,
          verbatimSymlinks: true,
        });
      await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
      const result = await run({ DATABASE_URL: '', SERVICES: 'auth', SPA_MODE: 'prebuilt' }, copy);
      expect(result).toMatchObject({
        code: 1,
        output: `The pages are not built in ${copy}/dist/web: run "npm run build" first\n`,
      });
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });
});
