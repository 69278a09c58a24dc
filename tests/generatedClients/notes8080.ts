// A client of the 8080 notes service, as its users write one (see generatedClients.test.ts): it
// throws at the first answer it did not expect. Argument: the service's base URL.
import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import type { paths } from './notes8080.api.js';

const client = createClient<paths>({ baseUrl: process.argv[2] });

assert.deepEqual((await client.GET('/live')).data, { status: 'live' });
assert.deepEqual((await client.GET('/ready')).data, { status: 'ready' });

const created = await client.POST('/notes', {
  body: { title: 'first', body: 'hello' },
  params: { header: { 'Idempotency-Key': 'generated-client-1' } },
});
assert.equal(created.response.status, 201);
const note = created.data;
assert.ok(note);
assert.ok(!Number.isNaN(Date.parse(note.created_at)));
const path = { id: note.id };
/** A request on the first note, with these headers. */
const onNote = (header: Record<string, string> = {}) => ({ params: { path, header } });

const untitled = await client.POST('/notes', { body: { title: '', body: null } });
assert.equal(untitled.response.status, 400);
assert.equal(typeof untitled.error?.error, 'string');

const page = await client.GET('/notes', { params: { query: { limit: 1 } } });
assert.deepEqual(page.data, [note]);
const read = await client.GET('/notes/{id}', onNote());
assert.deepEqual(read.data, note);
const etag = read.response.headers.get('etag');
assert.ok(etag);
const unchanged = await client.GET('/notes/{id}', onNote({ 'If-None-Match': etag }));
assert.equal(unchanged.response.status, 304);

// A full replace: the body left out becomes empty.
const ifMatch = onNote({ 'If-Match': etag });
const replaced = await client.PUT('/notes/{id}', { ...ifMatch, body: { title: 'renamed' } });
assert.deepEqual(replaced.data, { ...note, title: 'renamed', body: '' });
const stale = await client.PUT('/notes/{id}', { ...ifMatch, body: { title: 'again' } });
assert.equal(stale.response.status, 412);
assert.equal(typeof stale.error?.error, 'string');

const zstd = { 'Content-Encoding': 'zstd' };
const encoded = await client.POST('/notes', { body: { title: 't' }, headers: zstd });
assert.equal(encoded.response.status, 415);
assert.deepEqual(encoded.error, { error: 'Unsupported Content-Encoding: zstd' });

const deleted = await client.DELETE('/notes/{id}', onNote());
assert.equal(deleted.response.status, 204);
const gone = await client.GET('/notes/{id}', onNote());
assert.equal(gone.response.status, 404);
assert.deepEqual(gone.error, { error: 'ノートが見つかりません' });
