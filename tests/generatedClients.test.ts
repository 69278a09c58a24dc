import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../harness/http.js';
import { ROOT } from '../harness/processes.js';
import { loadConfig } from '../server/config.js';
import { useEachService } from './support/services.js';

// What a user of an API does with its published contract: generate a typed client from the
// running service's /openapi.json with openapi-typescript (its default options), write a program
// with openapi-fetch that uses every operation, compile it with `strict`, and run it against the
// service. A document a generator reads otherwise than meant (an optional field typed as required,
// an error body typed as nothing) fails the compilation; one that says what the service does not
// do fails the run. The programs (tests/generatedClients/) have types only once generated here.

const PROGRAMS = path.join(import.meta.dirname, 'generatedClients');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const SERVICES = ['notes8080', 'notes8000', 'auth'] as const;
type Name = (typeof SERVICES)[number];
/** As a user's project compiles: `strict`, ES modules for Node. */
const TSCONFIG = {
  compilerOptions: {
    ...{ strict: true, target: 'ES2023', module: 'NodeNext', moduleResolution: 'NodeNext' },
    ...{ lib: ['ES2023', 'DOM'], types: ['node'], skipLibCheck: true, noEmitOnError: true },
    ...{ rootDir: '.', outDir: 'out' },
  },
  files: SERVICES.map((name) => `${name}.ts`),
};

const env = { NODE_ENV: 'test', SESSION_STORE: 'postgres' };
const services = useEachService(env);
const documents = new Map<Name, OpenAPI3>();
let dir = '';

beforeAll(async () => {
  // A folder of the client's own, as a user's project: ES modules, the repository's packages.
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'generated-clients-'));
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await fs.writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  for (const name of SERVICES) {
    const answer = await send(services[name].url, { method: 'GET', path: '/openapi.json' });
    expect(answer.status).toBe(200);
    const document = answer.json as OpenAPI3;
    documents.set(name, document);
    await fs.writeFile(path.join(dir, `${name}.api.ts`), astToString(await openapiTS(document)));
    await fs.copyFile(path.join(PROGRAMS, `${name}.ts`), path.join(dir, `${name}.ts`));
  }
});
afterAll(() => dir && fs.rm(dir, { recursive: true, force: true }));

/** What each program is given on its command line: the URL, and the login service's accounts. */
function argumentsOf(name: Name) {
  if (name !== 'auth') return services[name].url;
  const { accounts } = loadConfig(env).auth;
  const account = (role: string) => {
    const { email, password } = accounts.find((candidate) => candidate.role === role)!;
    return { email, password };
  };
  const [baseUrl, admin, user] = [services.auth.url, account('admin'), account('user')];
  return JSON.stringify({ baseUrl, admin, user });
}

/** Runs a Node program to its end: its exit code and output. */
const run = (...args: string[]) =>
  promisify(execFile)(process.execPath, args, { timeout: 60_000 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (failure: { code: number | string; stdout: string; stderr: string }) => failure,
  );
let compilation: Promise<string> | undefined;
/** Compiles the three programs with their generated types into `out/`, once: the errors, or ''. */
const compiled = () =>
  (compilation ??= run(TSC, '-p', dir, '--pretty', 'false').then(({ stdout }) => stdout));

describe('clients generated from the published documents (openapi-typescript/-fetch)', () => {
  test.each(SERVICES)('the %s program calls every operation of its document', async (name) => {
    const source = await fs.readFile(path.join(PROGRAMS, `${name}.ts`), 'utf8');
    const calls = source.matchAll(/client\.(GET|POST|PUT|DELETE)\('([^']+)'/g);
    const called = new Set([...calls].map(([, method, route]) => `${method} ${route}`));
    const documented = Object.entries(documents.get(name)!.paths ?? {}).flatMap(([route, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${route}`),
    );
    expect(documented.filter((operation) => !called.has(operation))).toEqual([]);
  });

  test('the three programs compile with `strict` against their generated types', async () => {
    expect(await compiled()).toBe('');
  }, 60_000);

  test.each(SERVICES)('the %s program, run against its service, gets its answers', async (name) => {
    expect(await compiled(), 'the programs compile').toBe('');
    const program = path.join(dir, 'out', `${name}.js`);
    const { code, stderr } = await run(program, argumentsOf(name));
    expect(code, stderr).toBe(0);
  });
});
