import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { auth } from '../server/services.js';
import { builtSpa, ensureSpaBuilt } from '../server/auth/spa.js';
import { notes8000 } from '../server/services.js';
import { notes8080 } from '../server/services.js';
import { loadConfig } from '../server/config.js';
import { ROOT } from '../harness/processes.js';
import { browserAvailable, launchBrowser } from './support/browser.js';
import { startTestService } from './support/services.js';

// Every service publishes its contract at /openapi.json. The three documents must be valid
// OpenAPI 3.1 and pass Redocly's recommended rules with no error and no warning, but for what
// 8000 says on purpose: its trailing-slash redirect (`/notes/`) is a path of its own, with a
// slash, whose operations answer 307 and no 2xx.
const INTENDED_PROBLEMS: Record<string, string[]> = {
  notes8000: [
    'no-path-trailing-slash at #/paths/~1notes~1',
    'operation-2xx-response at #/paths/~1notes~1/get/responses',
    'operation-2xx-response at #/paths/~1notes~1/post/responses',
  ],
};

type Document = Record<string, any>;
const documents = new Map<string, Document>();
const urls = new Map<string, string>();
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await ensureSpaBuilt();
  const config = loadConfig({ PASSWORD_HASH_COST: '1024' });
  const started = [
    await startTestService(notes8080, { deps: { config: config.notes } }),
    await startTestService(notes8000, { deps: { config: config.notes } }),
    await startTestService(auth, { deps: { config: config.auth, spa: await builtSpa() } }),
  ];
  for (const [name, service] of [
    ['notes8080', started[0]],
    ['notes8000', started[1]],
    ['auth', started[2]],
  ] as const) {
    stops.push(service.close);
    urls.set(name, service.url);
    const response = await fetch(`${service.url}/openapi.json`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    documents.set(name, (await response.json()) as Document);
  }
});

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
});

describe('the published OpenAPI documents', () => {
  test.each(['notes8080', 'notes8000', 'auth'])(
    '%s passes `redocly lint` with its recommended ' +
      'rules: no error, no warning but the intended ones',
    async (name) => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-'));
      try {
        const file = path.join(dir, `${name}.json`);
        await fs.writeFile(file, JSON.stringify(documents.get(name)));
        const cli = path.join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
        const run = await promisify(execFile)(
          process.execPath,
          [cli, 'lint', '--extends=recommended', '--format=json', file],
          { cwd: dir },
        ).catch((failure: { stdout: string }) => failure);
        const report = JSON.parse(run.stdout) as {
          totals: { errors: number; warnings: number };
          problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
        };
        const intended = INTENDED_PROBLEMS[name] ?? [];
        const unintended = report.problems.filter(
          (problem) => !intended.includes(`${problem.ruleId} at ${problem.location[0]?.pointer}`),
        );
        expect(
          unintended.map(
            (problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`,
          ),
        ).toEqual([]);
        expect(report.problems).toHaveLength(intended.length);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );

  test('are OpenAPI 3.1, and each service documents the operations of its spec', () => {
    const operations = (document: Document) =>
      Object.entries(document.paths as Document).flatMap(([route, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
      );
    for (const document of documents.values()) expect(document.openapi).toBe('3.1.0');
    expect(operations(documents.get('notes8080')!).sort()).toEqual(
      [
        'GET /notes',
        'POST /notes',
        'GET /notes/{id}',
        'PUT /notes/{id}',
        'DELETE /notes/{id}',
        'GET /ready',
        'GET /live',
      ].sort(),
    );
    expect(operations(documents.get('notes8000')!).sort()).toEqual(
      [
        ...[
          'GET /health',
          'GET /notes',
          'POST /notes',
          'GET /notes/{note_id}',
          'PUT /notes/{note_id}',
          'DELETE /notes/{note_id}',
          'GET /ready',
          'GET /live',
        ],
        ...['GET /notes/', 'POST /notes/'],
      ].sort(),
    );
    expect(operations(documents.get('auth')!).sort()).toEqual(
      [
        ...['POST /api/login', 'GET /api/me', 'POST /api/logout', 'GET /ready', 'GET /live'],
        ...['GET /api/sessions', 'DELETE /api/sessions', 'DELETE /api/sessions/{id}'],
        ...[
          'GET /api/admin/sessions',
          'DELETE /api/admin/sessions/{id}',
          'DELETE /api/admin/users/{id}/sessions',
          'GET /api/admin/settings',
        ],
        ...[
          'GET /api/admin/users',
          'DELETE /api/admin/users/{id}/throttle',
          'GET /api/admin/audit',
        ],
      ].sort(),
    );
  });

  test('the login service documents its cookie as the security scheme of GET /api/me', () => {
    const document = documents.get('auth')!;
    expect(document.components.securitySchemes.sessionCookie).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'token',
    });
    expect(document.paths['/api/me'].get.security).toEqual([{ sessionCookie: [] }]);
    expect(document.paths['/api/login'].post.security).toEqual([]);
  });

  test(
    'timestamps are declared as they are sent: RFC 3339 ' +
      'on 8080, naive ISO 8601 with a pattern on 8000',
    () => {
      const note8080 = documents.get('notes8080')!.components.schemas.Note.properties.created_at;
      expect(note8080).toMatchObject({ type: 'string', format: 'date-time' });
      for (const field of ['created_at', 'updated_at']) {
        const note8000 = documents.get('notes8000')!.components.schemas.Note.properties[field];
        expect(note8000.format).toBeUndefined();
        expect(new RegExp(note8000.pattern).test('2026-11-22T10:11:49.123456')).toBe(true);
        expect(new RegExp(note8000.pattern).test('2026-11-22T10:11:49.123456Z')).toBe(false);
      }
    },
  );

  test('every status a route can answer is documented, shared machinery included', () => {
    const statuses = (document: Document, route: string, method: string) =>
      Object.keys(document.paths[route][method].responses).sort();
    expect(statuses(documents.get('notes8080')!, '/notes/{id}', 'put')).toEqual([
      '200',
      '400',
      '404',
      '412',
      '413',
      '415',
      '429',
      '431',
      '500',
      '507',
    ]);
    expect(statuses(documents.get('notes8000')!, '/notes', 'post')).toEqual([
      '201',
      '400',
      '413',
      '415',
      '422',
      '429',
      '431',
      '500',
      '507',
    ]);
    expect(statuses(documents.get('auth')!, '/api/login', 'post')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '429',
      '431',
      '500',
    ]);
    for (const document of documents.values()) {
      expect(Object.keys(document['x-unmatched'])).toEqual(expect.arrayContaining(['404', '405']));
    }
  });

  test("every failure answer has its body schema, but Node's 431, which has no body", () => {
    for (const [name, document] of documents) {
      const untyped = Object.entries(document.paths as Document).flatMap(([route, methods]) =>
        Object.entries(methods as Document).flatMap(([method, operation]) =>
          Object.entries(operation.responses as Document)
            .filter(
              ([status, response]) =>
                Number(status) >= 400 &&
                status !== '431' &&
                !response.content?.['application/json']?.schema,
            )
            .map(([status]) => `${name} ${method} ${route} ${status}`),
        ),
      );
      expect(untyped).toEqual([]);
    }
  });

  test(
    'an unknown Content-Encoding is documented as the ' +
      '415 of every operation with a body, on every service',
    async () => {
      for (const [name, document] of documents) {
        const withBody = Object.values(document.paths as Document)
          .flatMap((methods) => Object.values(methods as Document))
          .filter((operation) => operation.requestBody);
        expect(withBody.length, name).toBeGreaterThan(0);
        for (const { responses } of withBody) {
          expect(responses['415'].description).toMatch(/Content-Encoding/);
          expect(responses['400'].description).not.toMatch(/unknown Content-Encoding/);
        }
      }
      // As each service answers it.
      for (const [name, path] of [
        ['notes8080', '/notes'],
        ['notes8000', '/notes'],
        ['auth', '/api/login'],
      ] as const) {
        const response = await fetch(`${urls.get(name)}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' },
          body: '{}',
        });
        expect(response.status, name).toBe(415);
        expect(JSON.stringify(await response.json())).toContain(
          'Unsupported Content-Encoding: zstd',
        );
      }
    },
  );

  test(
    'the login service documents the cookies its answers set: ' +
      'the session and device cookies, and the deletion on logout',
    () => {
      const { paths } = documents.get('auth')!;
      const setCookie = (route: string) =>
        paths[route].post.responses['200'].headers['Set-Cookie'].description as string;
      expect(setCookie('/api/login')).toContain(
        '`token=<session token>; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax`',
      );
      expect(setCookie('/api/login')).toContain(
        '`device=<device token>; Max-Age=7776000; Path=/api/login; HttpOnly; SameSite=Lax`',
      );
      expect(setCookie('/api/logout')).toContain(
        '`token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`',
      );
    },
  );
});

describe.skipIf(!browserAvailable)('Swagger UI at /docs', () => {
  test.each(['notes8080', 'notes8000', 'auth'])(
    '%s: lists every operation of its document, from its own files only',
    async (name) => {
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        const foreign: string[] = [];
        page.on('request', (request) => {
          if (!request.url().startsWith(urls.get(name)!) && !request.url().startsWith('data:'))
            foreign.push(request.url());
        });
        await page.goto(`${urls.get(name)}/docs`);
        await page.locator('.opblock').first().waitFor();
        const listed = await page
          .locator('.opblock')
          .evaluateAll((blocks) =>
            blocks.map(
              (block) =>
                `${block.querySelector('.opblock-summary-method')?.textContent} ` +
                block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
            ),
          );
        const documented = Object.entries(documents.get(name)!.paths as Document).flatMap(
          ([route, methods]) =>
            Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
        );
        expect(listed.sort()).toEqual(documented.sort());
        expect(foreign).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});
