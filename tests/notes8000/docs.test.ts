import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import { useNotes8000 } from '../support/notes8000.js';
import { statusAndBody } from '../support/notesServices.js';

// The 8000 service's /openapi.json as FastAPI would publish it, and its /docs page served offline
// (Swagger UI's listing in a browser, and "Try it out", are in contracts.test.ts).

const { service, call } = useNotes8000();
/** What the service answers outside its documented operations. */
const get = (path: string) => send(service().url, { method: 'GET', path });
let paths: Record<string, any>;
let schemas: Record<string, any>;
beforeAll(async () => {
  const answer = await get('/openapi.json');
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const document = answer.json as Record<string, any>;
  [paths, schemas] = [document.paths, document.components.schemas];
  expect(document.info).toMatchObject({ title: 'Notes API', version: '0.1.0' });
});
const json = (content: any) => content['application/json'].schema;
const answerOf = (route: string, method: string, status: string) =>
  json(paths[route][method].responses[status].content);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const object = (title: string, properties: object, required: string[]) => ({
  ...{ type: 'object', title },
  ...{ properties, required },
});

describe('notes8000 /openapi.json', () => {
  test('names and sums up every operation, and describes the request bodies', () => {
    for (const [route, methods] of Object.entries(paths))
      for (const [method, operation] of Object.entries(methods as object))
        expect(operation.summary, `${method} ${route}`).toEqual(expect.any(String));
    expect(paths['/notes'].post.summary).toBe('Create Note');
    expect(paths['/notes'].post.operationId).toBe('create_note_notes_post');
    expect(paths['/notes/{note_id}'].get.operationId).toBe('get_note_notes__note_id__get');

    expect(json(paths['/notes'].post.requestBody.content)).toEqual(ref('NoteCreate'));
    expect(json(paths['/notes/{note_id}'].put.requestBody.content)).toEqual(ref('NoteUpdate'));
    const nul = '^[^\\u0000]*$';
    const title = { type: 'string', maxLength: 100, pattern: nul };
    const content = { type: 'string', pattern: nul };
    expect(schemas.NoteCreate).toEqual(
      object(
        'NoteCreate',
        { title: { ...title, title: 'Title' }, content: { ...content, title: 'Content' } },
        ['title', 'content'],
      ),
    );
    const orNull = (schema: object, name: string) => ({
      ...{ anyOf: [schema, { type: 'null' }], title: name },
      description: expect.stringContaining('default null'),
    });
    const optional = { title: orNull(title, 'Title'), content: orNull(content, 'Content') };
    expect(schemas.NoteUpdate).toEqual(object('NoteUpdate', optional, []));
  });

  test('describes the answers: Note, its timestamps, errors, messages, an integer path id', () => {
    const fields = ['id', 'title', 'content', 'created_at', 'updated_at'];
    expect([Object.keys(schemas.Note.properties), schemas.Note.required]).toEqual([fields, fields]);
    for (const [route, method, status, schema] of [
      ['/notes', 'post', '201', ref('Note')],
      ['/notes', 'get', '200', { type: 'array', items: ref('Note') }],
      ['/notes/{note_id}', 'get', '200', ref('Note')],
      ['/notes/{note_id}', 'put', '200', ref('Note')],
      ['/notes/{note_id}', 'delete', '200', ref('Message')],
    ] as const)
      expect(answerOf(route, method, status), `${method} ${route}`).toEqual(schema);
    // The timestamps are naive ISO 8601 (Python's isoformat of a UTC datetime): no offset, so not
    // RFC 3339's date-time.
    const shown = ['2026-11-22T10:11:49.123456', '2026-11-22T10:11:49'];
    const never = ['2026-11-22T10:11:49.123456Z', '2026-11-22T10:11:49+00:00'];
    never.push('2026-11-22T10:11:49.123', '2026-11-22');
    for (const field of ['created_at', 'updated_at']) {
      const timestamp = schemas.Note.properties[field];
      expect(timestamp).toMatchObject({ type: 'string', pattern: expect.any(String) });
      expect(timestamp).not.toHaveProperty('format');
      const pattern = new RegExp(timestamp.pattern);
      const [refused, allowed] = [
        shown.filter((text) => !pattern.test(text)),
        never.filter((text) => pattern.test(text)),
      ];
      expect({ refused, allowed }, field).toEqual({ refused: [], allowed: [] });
    }

    const [message, invalid] = [ref('HTTPError'), ref('HTTPValidationError')];
    for (const method of ['get', 'put', 'delete']) {
      const failure = (status: string) => answerOf('/notes/{note_id}', method, status);
      expect([failure('422'), failure('404')]).toEqual([invalid, message]);
    }
    // A create's 422 is also an Idempotency-Key reused with another body: a message.
    expect(answerOf('/notes', 'post', '422')).toEqual({ anyOf: [message, invalid] });
    const entries = { detail: { type: 'array', items: ref('ValidationError') } };
    expect(schemas.HTTPValidationError).toMatchObject({ type: 'object', properties: entries });
    const { ValidationError, HTTPError } = schemas;
    const required = ['type', 'loc', 'msg', 'input'];
    expect(ValidationError.required).toEqual(expect.arrayContaining(required));
    // Every key an entry's `ctx` is sent with, and no other.
    const [integer, string] = [{ type: 'integer' }, { type: 'string' }];
    expect(ValidationError.properties.ctx).toMatchObject({
      type: 'object',
      properties: { max_length: integer, ge: integer, le: integer, error: string },
      additionalProperties: false,
    });
    const detail = { detail: { type: 'string', title: 'Detail' } };
    expect(HTTPError).toEqual(object('HTTPError', detail, ['detail']));
    const noteId = { type: 'integer', title: 'Note Id' };
    expect(paths['/notes/{note_id}'].get.parameters).toEqual([
      { name: 'note_id', in: 'path', required: true, schema: noteId },
      expect.objectContaining({ name: 'If-None-Match', in: 'header', required: false }),
    ]);
  });

  test('documents the redirect of `/notes/` as its own operations: 307, a Location', async () => {
    for (const method of ['get', 'post']) {
      const { responses } = paths['/notes/'][method];
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
    expect([page.status, page.headers['content-type']]).toEqual([
      200,
      expect.stringMatching(/^text\/html/),
    ]);
    const assets = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset, 'no CDN: the page must work offline').toMatch(/^\/[^/]/);
      const served = await get(asset);
      expect([served.status, served.body.length > 0], asset).toEqual([200, true]);
    }
  });

  test('serves the installed swagger-ui-dist, and none of its other files', async () => {
    const bundle = await get('/docs/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).toMatch(/^text\/javascript/);
    const resolve = createRequire(import.meta.url).resolve;
    const installed = await readFile(resolve('swagger-ui-dist/swagger-ui-bundle.js'));
    expect(bundle.body.equals(installed)).toBe(true);
    for (const other of ['/docs/package.json', '/docs/..%2Fpackage.json', '/docs/index.html'])
      expect(statusAndBody(await get(other)), other).toEqual([404, { detail: 'Not Found' }]);
  });
});
