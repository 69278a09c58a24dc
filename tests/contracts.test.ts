import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../harness/processes.js';
import { send } from '../harness/http.js';
import { browserAvailable, launchBrowser } from './support/browser.js';
import { useEachService } from './support/services.js';
import { openSwaggerUi, operationsOf } from './support/swaggerUi.js';

// Every service publishes its contract at /openapi.json and shows it with Swagger UI at /docs.
// The three documents must be valid OpenAPI 3.1 and pass Redocly's recommended rules with no
// error and no warning, but for what 8000 says on purpose: its trailing-slash redirect (`/notes/`)
// is a path of its own, with a slash, whose operations answer 307 and no 2xx.
const INTENDED_PROBLEMS: Record<string, string[]> = {
  notes8000: [
    'no-path-trailing-slash at #/paths/~1notes~1',
    'operation-2xx-response at #/paths/~1notes~1/get/responses',
    'operation-2xx-response at #/paths/~1notes~1/post/responses',
  ],
};
const NAMES = ['notes8080', 'notes8000', 'auth'] as const;

type Document = Record<string, any>;
const services = useEachService();
const documents = new Map<string, Document>();
const url = (name: string) => services[name as (typeof NAMES)[number]].url;
let browser: Browser | undefined;
/** A folder of the documents' files, for the linter. */
let dir = '';

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-'));
  for (const name of NAMES) {
    const response = await send(url(name), { method: 'GET', path: '/openapi.json' });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    documents.set(name, response.json as Document);
    await fs.writeFile(path.join(dir, `${name}.json`), response.text);
  }
});
afterAll(async () => {
  await browser?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const SCHEMA_REF = /"\$ref":"#\/components\/schemas\/([^"]+)"/g;
type Problem = { ruleId: string; message: string; location: { pointer: string }[] };
let linting: Promise<Problem[][]> | undefined;
/**
 * `redocly lint` of the three documents with its recommended rules, run once for the three tests
 * (each start of the CLI costs about a second of CPU): the problems of each, in NAMES' order.
 */
const linted = () =>
  (linting ??= promisify(execFile)(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
      ...['lint', '--extends=recommended', '--format=json', ...NAMES.map((name) => `${name}.json`)],
    ],
    // Its usage report would be a request to the Internet.
    { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
  )
    .catch((failure: { stdout: string }) => failure)
    .then(({ stdout }) => {
      // A JSON report per file, in the order given, one right after another.
      const reports = stdout.split(/(?<=^\})\s*(?=\{)/m);
      if (reports.length !== NAMES.length) throw new Error(`not a report per file:\n${stdout}`);
      return reports.map((report) => (JSON.parse(report) as { problems: Problem[] }).problems);
    }));

describe('the published OpenAPI documents', () => {
  test.each(NAMES)(
    '%s passes `redocly lint` with its recommended rules: no error, no warning but the intended',
    async (name) => {
      const problems = (await linted())[NAMES.indexOf(name)]!;
      const intended = INTENDED_PROBLEMS[name] ?? [];
      const where = (problem: Problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}`;
      const unintended = problems.filter((problem) => !intended.includes(where(problem)));
      expect(unintended.map((problem) => `${where(problem)}: ${problem.message}`)).toEqual([]);
      expect(problems).toHaveLength(intended.length);
    },
    60_000,
  );

  test('are OpenAPI 3.1, and each service documents the operations of its spec', () => {
    for (const document of documents.values()) expect(document.openapi).toBe('3.1.0');
    const listed = (text: string) => text.split(/,\s*/).sort();
    expect(operationsOf(documents.get('notes8080')!)).toEqual(
      listed(`GET /notes, POST /notes, GET /notes/{id}, PUT /notes/{id}, DELETE /notes/{id},
        GET /ready, GET /live`),
    );
    expect(operationsOf(documents.get('notes8000')!)).toEqual(
      listed(`GET /health, GET /notes, POST /notes, GET /notes/{note_id}, PUT /notes/{note_id},
        DELETE /notes/{note_id}, GET /ready, GET /live, GET /notes/, POST /notes/`),
    );
    expect(operationsOf(documents.get('auth')!)).toEqual(
      listed(`POST /api/login, GET /api/me, POST /api/logout, GET /ready, GET /live,
        GET /api/sessions, DELETE /api/sessions, DELETE /api/sessions/{id},
        GET /api/admin/sessions, DELETE /api/admin/sessions/{id},
        DELETE /api/admin/users/{id}/sessions, GET /api/admin/settings, GET /api/admin/users,
        DELETE /api/admin/users/{id}/throttle, GET /api/admin/audit`),
    );
  });

  test('every status a route can answer is documented, shared machinery included', () => {
    const statuses = (name: string, route: string, method: string) =>
      Object.keys(documents.get(name)!.paths[route][method].responses).sort().join(' ');
    const put = statuses('notes8080', '/notes/{id}', 'put');
    expect(put).toBe('200 400 404 412 413 415 429 431 500 507');
    expect(statuses('notes8000', '/notes', 'post')).toBe('201 400 413 415 422 429 431 500 507');
    expect(statuses('auth', '/api/login', 'post')).toBe('200 400 401 403 413 415 429 431 500');
    for (const document of documents.values())
      expect(Object.keys(document['x-unmatched'])).toEqual(expect.arrayContaining(['404', '405']));
  });

  test("every failure answer has its body schema, but Node's 431; every $ref resolves", () => {
    for (const [name, document] of documents) {
      const untyped = Object.entries(document.paths as Document).flatMap(([route, methods]) =>
        Object.entries(methods as Document).flatMap(([method, operation]) =>
          Object.entries(operation.responses as Document)
            .filter(([status]) => Number(status) >= 400 && status !== '431')
            .filter(([, response]) => !response.content?.['application/json']?.schema)
            .map(([status]) => `${name} ${method} ${route} ${status}`),
        ),
      );
      expect(untyped).toEqual([]);
      const refs = [...JSON.stringify(document).matchAll(SCHEMA_REF)];
      expect(refs.length).toBeGreaterThan(0);
      for (const [, schema] of refs)
        expect(document.components.schemas, name).toHaveProperty(schema!);
    }
  });

  test('documents and answers 415 to an unknown Content-Encoding on every service', async () => {
    // As the 415 of every operation with a body.
    for (const [name, document] of documents) {
      const withBody = Object.values(document.paths as Document)
        .flatMap((methods) => Object.values(methods as Document))
        .filter((operation) => operation.requestBody);
      expect(withBody.length, name).toBeGreaterThan(0);
      for (const { responses } of withBody) {
        expect(responses['415'].description).toMatch(/Content-Encoding/);
        expect(responses['400'].description).not.toMatch(/unknown Content-Encoding/);
      }
      const answer = await send(url(name), {
        method: 'POST',
        path: name === 'auth' ? '/api/login' : '/notes',
        headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' },
        body: '{}',
      });
      expect(answer.status, name).toBe(415);
      expect(answer.text).toContain('Unsupported Content-Encoding: zstd');
    }
  });

  test('notes8080 declares its timestamps as it sends them: RFC 3339 date-times', () => {
    const { created_at } = documents.get('notes8080')!.components.schemas.Note.properties;
    expect(created_at).toMatchObject({ type: 'string', format: 'date-time' });
  });

  test('the login service documents its cookies: the security scheme, and what answers set', () => {
    const { components, paths } = documents.get('auth')!;
    const { sessionCookie } = components.securitySchemes;
    expect(sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'token' });
    expect(paths['/api/me'].get.security).toEqual([{ sessionCookie: [] }]);
    expect(paths['/api/login'].post.security).toEqual([]);
    const setCookie = (route: string) =>
      paths[route].post.responses['200'].headers['Set-Cookie'].description as string;
    const cookie = (text: string) => `\`${text}; HttpOnly; SameSite=Lax\``;
    const login = setCookie('/api/login');
    expect(login).toContain(cookie('token=<session token>; Max-Age=3600; Path=/'));
    expect(login).toContain(cookie('device=<device token>; Max-Age=7776000; Path=/api/login'));
    expect(setCookie('/api/logout')).toContain(cookie('token=; Max-Age=0; Path=/'));
  });
});

// The other services' pages are the same Swagger UI on their own documents: the faults pass opens
// them (tests/faults/swaggerUi.test.ts).
describe('Swagger UI at /docs', () => {
  // Launched before the test, under the hooks' longer timeout: on a busy machine Chromium's start
  // alone can take much of a test's 30 s.
  beforeAll(async () => {
    if (browserAvailable) browser = await launchBrowser();
  });
  test.skipIf(!browserAvailable).each(['notes8000'])(
    '%s: lists every operation of its document, from its own files only; a request tried out',
    async (name) => {
      const { page, listed, foreign } = await openSwaggerUi(browser!, url(name));
      try {
        expect(listed).toEqual(operationsOf(documents.get(name)!));
        await tryItOut(page, url(name));
        expect(foreign).toEqual([]);
      } finally {
        await page.close();
      }
    },
  );
});

/** "Try it out" on POST /notes of the 8000 docs page: the note is created (201), and listed. */
async function tryItOut(page: Page, url: string) {
  const create = page
    .locator('.opblock-post')
    .filter({ has: page.locator('.opblock-summary-path[data-path="/notes"]') });
  await create.locator('.opblock-summary').click();
  await create.getByRole('button', { name: 'Try it out' }).click();
  const note = { title: 'from the docs', content: 'tried out' };
  await create.locator('textarea.body-param__text').fill(JSON.stringify(note));
  await create.getByRole('button', { name: 'Execute' }).click();
  const status = create.locator('.live-responses-table .response .response-col_status').first();
  await expect.poll(() => status.textContent(), { timeout: 10_000 }).toContain('201');
  await expect
    .poll(() => create.locator('.live-responses-table .microlight').first().textContent())
    .toContain('from the docs');
  const listed = (await send(url, { method: 'GET', path: '/notes' })).json as object[];
  expect(listed).toEqual([expect.objectContaining(note)]);
}
