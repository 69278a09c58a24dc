import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../harness/processes.js';
import { auth } from '../server/services.js';
import { builtSpa, ensureSpaBuilt } from '../server/auth/spa.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import { loadConfig } from '../server/config.js';
import { startTestService } from './support/services.js';

// What a user of an API does with its published contract: generate a typed client from the
// running service's /openapi.json with openapi-typescript (its default options), write a program
// with openapi-fetch that uses every operation, compile it with `strict`, and run it against the
// service. A document that a generator reads otherwise than it is meant (an optional field typed
// as required, an error body typed as nothing) fails the compilation; one that says what the
// service does not do fails the run. The programs are in tests/generatedClients/ (left out of the
// project's own type check: their types exist only once generated here).

const SCENARIOS = path.join(import.meta.dirname, 'generatedClients');
const SERVICES = ['notes8080', 'notes8000', 'auth'] as const;
type Name = (typeof SERVICES)[number];

const config = loadConfig({
  NODE_ENV: 'test',
  PASSWORD_HASH_COST: '1024',
  SESSION_STORE: 'postgres',
});
const account = (role: 'admin' | 'user') => {
  const { email, password } = config.auth.accounts.find((candidate) => candidate.role === role)!;
  return { email, password };
};

const documents = new Map<Name, OpenAPI3>();
/** What each program is given on its command line. */
const argumentsOf = new Map<Name, string>();
const stops: (() => Promise<void>)[] = [];
let dir = '';

beforeAll(async () => {
  await ensureSpaBuilt();
  const started = {
    notes8080: await startTestService(notes8080, { deps: { config: config.notes } }),
    notes8000: await startTestService(notes8000, { deps: { config: config.notes } }),
    auth: await startTestService(auth, { deps: { config: config.auth, spa: await builtSpa() } }),
  };
  stops.push(...Object.values(started).map((service) => service.close));
  argumentsOf.set('notes8080', started.notes8080.url);
  argumentsOf.set('notes8000', started.notes8000.url);
  argumentsOf.set(
    'auth',
    JSON.stringify({ baseUrl: started.auth.url, admin: account('admin'), user: account('user') }),
  );

  // A folder of the client's own, as a user's project: ES modules, the repository's packages.
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'generated-clients-'));
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const name of SERVICES) {
    const response = await fetch(`${started[name].url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as OpenAPI3;
    documents.set(name, document);
    await fs.writeFile(path.join(dir, `${name}.api.ts`), astToString(await openapiTS(document)));
    await fs.copyFile(path.join(SCENARIOS, `${name}.ts`), path.join(dir, `${name}.ts`));
  }
});

let compilation: Promise<string> | undefined;

/**
 * Compiles the three programs with their generated types into `out/`, once, as a user's project
 * would: `strict`, ES modules for Node. Resolves with the compiler's errors, formatted ('' when
 * none).
 */
function compiled(): Promise<string> {
  compilation ??= Promise.resolve().then(() => {
    const program = ts.createProgram({
      rootNames: SERVICES.map((name) => path.join(dir, `${name}.ts`)),
      options: {
        strict: true,
        target: ts.ScriptTarget.ES2023,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
        types: ['node'],
        skipLibCheck: true,
        noEmitOnError: true,
        rootDir: dir,
        outDir: path.join(dir, 'out'),
      },
    });
    const host = {
      getCanonicalFileName: (file: string) => file,
      getCurrentDirectory: () => dir,
      getNewLine: () => '\n',
    };
    const problems = ts.getPreEmitDiagnostics(program);
    return ts.formatDiagnostics(problems.length > 0 ? problems : program.emit().diagnostics, host);
  });
  return compilation;
}

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('clients generated from the published documents (openapi-typescript/-fetch)', () => {
  test.each(SERVICES)('the %s program calls every operation of its document', async (name) => {
    const source = await fs.readFile(path.join(SCENARIOS, `${name}.ts`), 'utf8');
    const called = new Set(
      [...source.matchAll(/client\.(GET|POST|PUT|DELETE)\('([^']+)'/g)].map(
        ([, method, route]) => `${method} ${route}`,
      ),
    );
    const documented = Object.entries(documents.get(name)!.paths ?? {}).flatMap(
      ([route, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
    );
    expect(documented.filter((operation) => !called.has(operation))).toEqual([]);
  });

  test('the three programs compile with `strict` against their generated types', async () => {
    expect(await compiled()).toBe('');
  }, 60_000);

  test.each(SERVICES)(
    'the %s program, run against the service, gets the answers it expects',
    async (name) => {
      expect(await compiled(), 'the programs compile').toBe('');
      const program = path.join(dir, 'out', `${name}.js`);
      const run = await promisify(execFile)(process.execPath, [program, argumentsOf.get(name)!], {
        timeout: 20_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (failure: { code: number | string; stderr: string }) => ({
          code: failure.code,
          stderr: failure.stderr,
        }),
      );
      expect(run.code, run.stderr).toBe(0);
    },
  );
});
