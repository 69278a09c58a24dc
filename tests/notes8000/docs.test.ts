import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import { useNotes8000 } from '../support/notes8000.js';

// The 8000 service's /openapi.json as FastAPI would publish it, and its /docs page served offline
// (Swagger UI's listing in a browser, and "Try it out", are in contracts.test.ts).

type JsonObject = Record<string, any>;
const { service, call } = useNotes8000();
/** What the service answers outside its documented operations. */
const get = (path: string) => send(service().url, { method: 'GET', path });
let document: JsonObject;
beforeAll(async () => {
  const answer = await get('/openapi.json');
  expect([answer.status, answer.headers['content-type']]).toEqual([
    200,
    expect.stringMatching(/^application\/json/),
  ]);
  document = answer.json as JsonObject;
});
const schemaOf = (route: string, method: string, status: string) =>
  document.paths[route][method].responses[status].content['application/json'].schema;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('notes8000 /openapi.json', () => {
  test('names and sums up every operation, and describes the request bodies', () => {
    expect(document.info).toMatchObject({ title: 'Notes API', version: '0.1.0' });
    for (const [route, methods] of Object.entries(document.paths as JsonObject))
      for (const [method, operation] of Object.entries(methods as JsonObject))
        expect(operation.summary, `${method} ${route}`).toEqual(expect.any(String));
    expect(document.paths['/notes'].post.summary).toBe('Create Note');
    expect(document.paths['/notes'].post.operationId).toBe('create_note_notes_post');
    expect(document.paths['/notes/{note_id}'].get.operationId).toBe('get_note_notes__note_id__get');

    const bodyOf = (route: string, method: string) =>
      document.paths[route][method].requestBody.content['application/json'].schema;
    expect(bodyOf('/notes', 'post')).toEqual(ref('NoteCreate'));
    expect(bodyOf('/notes/{note_id}', 'put')).toEqual(ref('NoteUpdate'));
    const nul = '^[^\\u0000]*$';
    const [title, content] = [
      { type: 'string', maxLength: 100, pattern: nul },
      { type: 'string', pattern: nul },
    ];
    expect(document.components.schemas.NoteCreate).toEqual({
      type: 'object',
      title: 'NoteCreate',
      properties: {
        title: { ...title, title: 'Title' },
        content: { ...content, title: 'Content' },
      },
      required: ['title', 'content'],
    });
    const orNull = (schema: object, name: string) => ({
      anyOf: [schema, { type: 'null' }],
      title: name,
      description: expect.stringContaining('default null'),
    });
    expect(document.components.schemas.NoteUpdate).toEqual({
      type: 'object',
      title: 'NoteUpdate',
      properties: { title: orNull(title, 'Title'), content: orNull(content, 'Content') },
      required: [],
    });
  });

  test('describes the answers: Note, its timestamps, errors, messages, an integer path id', () => {
    const { schemas } = document.components;
    const fields = ['id', 'title', 'content', 'created_at', 'updated_at'];
    expect([Object.keys(schemas.Note.properties), schemas.Note.required]).toEqual([fields, fields]);
    expect(schemaOf('/notes', 'post', '201')).toEqual(ref('Note'));
    expect(schemaOf('/notes', 'get', '200')).toEqual({ type: 'array', items: ref('Note') });
    for (const method of ['get', 'put'])
      expect(schemaOf('/notes/{note_id}', method, '200')).toEqual(ref('Note'));
    // The timestamps are naive ISO 8601 (Python's isoformat of a UTC datetime): no offset, so not
    // RFC 3339's date-time.
    for (const field of ['created_at', 'updated_at']) {
      const timestamp = schemas.Note.properties[field];
      expect(timestamp).toMatchObject({ type: 'string', pattern: expect.any(String) });
      expect(timestamp).not.toHaveProperty('format');
      const pattern = new RegExp(timestamp.pattern);
      const shown = ['2026-11-22T10:11:49.123456', '2026-11-22T10:11:49'];
      expect(
        shown.filter((text) => !pattern.test(text)),
        `${field} refuses`,
      ).toEqual([]);
      const never = ['2026-11-22T10:11:49.123456Z', '2026-11-22T10:11:49+00:00'];
      never.push('2026-11-22T10:11:49.123', '2026-11-22');
      expect(
        never.filter((text) => pattern.test(text)),
        `${field} allows`,
      ).toEqual([]);
    }

    for (const method of ['get', 'put', 'delete']) {
      expect(schemaOf('/notes/{note_id}', method, '422'), method).toEqual(
        ref('HTTPValidationError'),
      );
      expect(schemaOf('/notes/{note_id}', method, '404'), method).toEqual(ref('HTTPError'));
    }
    // A create's 422 is also an Idempotency-Key reused with another body: a message.
    expect(schemaOf('/notes', 'post', '422')).toEqual({
      anyOf: [ref('HTTPError'), ref('HTTPValidationError')],
    });
    expect(schemas.HTTPValidationError).toMatchObject({
      type: 'object',
      properties: { detail: { type: 'array', items: ref('ValidationError') } },
    });
    expect(schemas.ValidationError.required).toEqual(
      expect.arrayContaining(['type', 'loc', 'msg', 'input']),
    );
    // Every key an entry's `ctx` is sent with, and no other.
    expect(schemas.ValidationError.properties.ctx).toMatchObject({
      type: 'object',
      properties: {
        max_length: { type: 'integer' },
        ge: { type: 'integer' },
        le: { type: 'integer' },
        error: { type: 'string' },
      },
      additionalProperties: false,
    });
    expect(schemas.HTTPError).toEqual({
      type: 'object',
      title: 'HTTPError',
      properties: { detail: { type: 'string', title: 'Detail' } },
      required: ['detail'],
    });
    expect(schemaOf('/notes/{note_id}', 'delete', '200')).toEqual(ref('Message'));
    expect(document.paths['/notes/{note_id}'].get.parameters).toEqual([
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
    for (const method of ['get', 'post']) {
      const { responses } = document.paths['/notes/'][method];
      expect(responses['307'].headers.Location).toMatchObject({ schema: { type: 'string' } });
      expect(Object.keys(responses).filter((status) => Number(status) < 400)).toEqual(['307']);
    }
    const redirect = await call('POST', '/notes/?limit=1', { json: { title: 't', content: 'c' } });
    expect([redirect.status, redirect.headers.location]).toEqual([307, '/notes?limit=1']);
  });
});

describe('notes8000 /docs', () => {
  test('is an HTML page whose every referenced asset is served by the service itself', async () => {
    const page = await get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset, 'no CDN: the page must work offline').toMatch(/^\/[^/]/);
      const served = await get(asset);
      expect(served.status, asset).toBe(200);
      expect(served.body.length, asset).toBeGreaterThan(0);
    }
  });

  test('serves the installed swagger-ui-dist, and none of its other files', async () => {
    const installed = path.dirname(
      createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
    );
    const bundle = await get('/docs/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).toMatch(/^text\/javascript/);
    const file = await readFile(path.join(installed, 'swagger-ui-bundle.js'));
    expect(bundle.body.equals(file)).toBe(true);
    for (const other of ['/docs/package.json', '/docs/..%2Fpackage.json', '/docs/index.html'])
      expect(await get(other)).toMatchObject({ status: 404, json: { detail: 'Not Found' } });
  });
});
