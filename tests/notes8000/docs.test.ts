import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { browserAvailable, launchBrowser } from '../support/browser.js';
import { useNotes8000 } from '../support/notes8000.js';

/**
 * Every operation of the spec's endpoint table, the liveness and readiness checks, and the
 * trailing-slash redirect of `/notes/`, as OpenAPI names them.
 */
const OPERATIONS = [
  ['get', '/health'],
  ['get', '/notes'],
  ['post', '/notes'],
  ['get', '/notes/'],
  ['post', '/notes/'],
  ['get', '/notes/{note_id}'],
  ['put', '/notes/{note_id}'],
  ['delete', '/notes/{note_id}'],
  ['get', '/live'],
  ['get', '/ready'],
];

type JsonObject = Record<string, any>;

const { service } = useNotes8000();

async function openApi(): Promise<JsonObject> {
  const response = await fetch(`${service().url}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as JsonObject;
}

describe('/openapi.json', () => {
  test('is OpenAPI 3.1 and describes every endpoint with a summary', async () => {
    const document = await openApi();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'Notes API', version: '0.1.0' });
    const described = Object.entries(document.paths as JsonObject).flatMap(([route, operations]) =>
      Object.keys(operations).map((method) => [method, route]),
    );
    expect(described.sort()).toEqual([...OPERATIONS].sort());
    for (const [method, route] of OPERATIONS) {
      expect(document.paths[route][method].summary).toEqual(expect.any(String));
    }
    expect(document.paths['/notes'].post.summary).toBe('Create Note');
    expect(document.paths['/notes'].post.operationId).toBe('create_note_notes_post');
    expect(document.paths['/notes/{note_id}'].get.operationId).toBe('get_note_notes__note_id__get');
  });

  test('describes the request bodies as the validating schemas define them', async () => {
    const { components, paths } = await openApi();
    expect(paths['/notes'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NoteCreate',
    });
    expect(paths['/notes/{note_id}'].put.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NoteUpdate',
    });
    const nul = '^[^\\u0000]*$';
    expect(components.schemas.NoteCreate).toEqual({
      type: 'object',
      title: 'NoteCreate',
      properties: {
        title: { type: 'string', maxLength: 100, pattern: nul, title: 'Title' },
        content: { type: 'string', pattern: nul, title: 'Content' },
      },
      required: ['title', 'content'],
    });
    expect(components.schemas.NoteUpdate).toEqual({
      type: 'object',
      title: 'NoteUpdate',
      properties: {
        title: {
          anyOf: [{ type: 'string', maxLength: 100, pattern: nul }, { type: 'null' }],
          title: 'Title',
          description: expect.stringContaining('default null'),
        },
        content: {
          anyOf: [{ type: 'string', pattern: nul }, { type: 'null' }],
          title: 'Content',
          description: expect.stringContaining('default null'),
        },
      },
      required: [],
    });
  });

  test('describes the responses: Note, validation errors, messages, integer path id', async () => {
    const { components, paths } = await openApi();
    const schemaOf = (route: string, method: string, status: string) =>
      paths[route][method].responses[status].content['application/json'].schema;

    const note = components.schemas.Note;
    expect(Object.keys(note.properties)).toEqual([
      'id',
      'title',
      'content',
      'created_at',
      'updated_at',
    ]);
    expect(note.required).toEqual(['id', 'title', 'content', 'created_at', 'updated_at']);
    expect(schemaOf('/notes', 'post', '201')).toEqual({ $ref: '#/components/schemas/Note' });
    expect(schemaOf('/notes', 'get', '200')).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Note' },
    });
    for (const method of ['get', 'put'])
      expect(schemaOf('/notes/{note_id}', method, '200')).toEqual({
        $ref: '#/components/schemas/Note',
      });
    // The timestamps are naive ISO 8601 (Python's isoformat of a UTC datetime): no offset, so not
    // RFC 3339's date-time.
    for (const field of ['created_at', 'updated_at']) {
      const timestamp = note.properties[field];
      expect(timestamp).toMatchObject({ type: 'string', pattern: expect.any(String) });
      expect(timestamp).not.toHaveProperty('format');
      const pattern = new RegExp(timestamp.pattern);
      const shown = ['2026-11-22T10:11:49.123456', '2026-11-22T10:11:49'];
      expect(
        shown.filter((text) => !pattern.test(text)),
        `${field} refuses what the service shows`,
      ).toEqual([]);
      const never = [
        '2026-11-22T10:11:49.123456Z',
        '2026-11-22T10:11:49+00:00',
        '2026-11-22T10:11:49.123',
        '2026-11-22',
      ];
      expect(
        never.filter((text) => pattern.test(text)),
        `${field} allows what the service never shows`,
      ).toEqual([]);
    }

    for (const [route, method] of [
      ['/notes/{note_id}', 'get'],
      ['/notes/{note_id}', 'put'],
      ['/notes/{note_id}', 'delete'],
    ]) {
      expect(schemaOf(route!, method!, '422'), `${method} ${route}`).toEqual({
        $ref: '#/components/schemas/HTTPValidationError',
      });
    }
    // A create's 422 is also an Idempotency-Key reused with another body: a message.
    expect(schemaOf('/notes', 'post', '422')).toEqual({
      anyOf: [
        { $ref: '#/components/schemas/HTTPError' },
        { $ref: '#/components/schemas/HTTPValidationError' },
      ],
    });
    expect(components.schemas.HTTPValidationError).toMatchObject({
      type: 'object',
      properties: {
        detail: { type: 'array', items: { $ref: '#/components/schemas/ValidationError' } },
      },
    });
    expect(components.schemas.ValidationError.required).toEqual(
      expect.arrayContaining(['type', 'loc', 'msg', 'input']),
    );
    // Every key an entry's `ctx` is sent with, and no other.
    expect(components.schemas.ValidationError.properties.ctx).toMatchObject({
      type: 'object',
      properties: {
        max_length: { type: 'integer' },
        ge: { type: 'integer' },
        le: { type: 'integer' },
        error: { type: 'string' },
      },
      additionalProperties: false,
    });

    for (const method of ['get', 'put', 'delete']) {
      expect(schemaOf('/notes/{note_id}', method, '404'), `${method} 404`).toEqual({
        $ref: '#/components/schemas/HTTPError',
      });
    }
    expect(components.schemas.HTTPError).toEqual({
      type: 'object',
      title: 'HTTPError',
      properties: { detail: { type: 'string', title: 'Detail' } },
      required: ['detail'],
    });
    expect(schemaOf('/notes/{note_id}', 'delete', '200')).toEqual({
      $ref: '#/components/schemas/Message',
    });
    expect(paths['/notes/{note_id}'].get.parameters).toEqual([
      {
        name: 'note_id',
        in: 'path',
        required: true,
        schema: { type: 'integer', title: 'Note Id' },
      },
      expect.objectContaining({ name: 'If-None-Match', in: 'header', required: false }),
    ]);
  });

  test('documents the redirect of `/notes/` as its own operations: 307, a Location', async () => {
    const { paths } = await openApi();
    for (const method of ['get', 'post']) {
      const { responses } = paths['/notes/'][method];
      expect(responses['307'].headers.Location).toMatchObject({ schema: { type: 'string' } });
      expect(Object.keys(responses).filter((status) => Number(status) < 400)).toEqual(['307']);
    }
    const redirect = await service().request('POST', '/notes/?limit=1', {
      json: { title: 't', content: 'c' },
    });
    expect(redirect.status).toBe(307);
    expect(redirect.headers.location).toBe('/notes?limit=1');
  });

  test('every $ref points at a schema that exists', async () => {
    const document = await openApi();
    const refs = [
      ...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g),
    ].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const name of refs) expect(document.components.schemas).toHaveProperty(name);
  });
});

describe('/docs over HTTP', () => {
  test('is an HTML page whose every referenced asset is served by the service itself', async () => {
    const response = await fetch(`${service().url}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset, 'no CDN: the page must work offline').toMatch(/^\/[^/]/);
      const served = await fetch(`${service().url}${asset}`);
      expect(served.status, asset).toBe(200);
      expect((await served.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
  });

  test('serves Swagger UI from the installed swagger-ui-dist package', async () => {
    const installed = path.dirname(
      createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
    );
    const response = await fetch(`${service().url}/docs/swagger-ui-bundle.js`);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(
      Buffer.from(await response.arrayBuffer()).equals(
        await readFile(path.join(installed, 'swagger-ui-bundle.js')),
      ),
    ).toBe(true);
  });

  test("serves none of the package's other files", async () => {
    for (const asset of ['/docs/package.json', '/docs/..%2Fpackage.json', '/docs/index.html']) {
      const response = await fetch(`${service().url}${asset}`);
      expect(response.status, asset).toBe(404);
      expect(await response.json()).toEqual({ detail: 'Not Found' });
    }
  });
});

describe.skipIf(!browserAvailable)('/docs in a browser', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  test('lists every endpoint, and "Try it out" on POST /notes creates a note (201)', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => void requested.push(request.url()));
    try {
      await page.goto(`${service().url}/docs`);
      await page.locator('.opblock').first().waitFor();

      const listed = await page
        .locator('.opblock')
        .evaluateAll((blocks) =>
          blocks.map((block) => [
            block.querySelector('.opblock-summary-method')?.textContent?.toLowerCase(),
            block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
          ]),
        );
      expect(listed.sort()).toEqual([...OPERATIONS].sort());

      const create = page
        .locator('.opblock-post')
        .filter({ has: page.locator('.opblock-summary-path[data-path="/notes"]') });
      await create.locator('.opblock-summary').click();
      await create.getByRole('button', { name: 'Try it out' }).click();
      await create
        .locator('textarea.body-param__text')
        .fill(JSON.stringify({ title: 'from the docs', content: 'tried out' }));
      await create.getByRole('button', { name: 'Execute' }).click();

      const status = create.locator('.live-responses-table .response .response-col_status').first();
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toContain('201');
      await expect
        .poll(() => create.locator('.live-responses-table .microlight').first().textContent())
        .toContain('from the docs');

      const { rows } = await service().db.query('SELECT content FROM notes WHERE title = $1', [
        'from the docs',
      ]);
      expect(rows).toEqual([{ content: 'tried out' }]);
      // Offline: the page fetched nothing but the service's own URLs.
      expect(
        requested.filter((url) => !url.startsWith(service().url) && !url.startsWith('data:')),
      ).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
