// A client of the 8000 notes service, as its users write one (see generatedClients.test.ts): it
// throws at the first answer it did not expect. Argument: the service's base URL.
import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import type { paths } from './notes8000.api.js';

const client = createClient<paths>({ baseUrl: process.argv[2] });

assert.deepEqual((await client.GET('/health')).data, { status: 'healthy' });
assert.deepEqual((await client.GET('/live')).data, { status: 'live' });
assert.deepEqual((await client.GET('/ready')).data, { status: 'ready' });

const created = await client.POST('/notes', {
  body: { title: 'first', content: 'hello' },
  params: { header: { 'Idempotency-Key': 'generated-client-1' } },
});
assert.equal(created.response.status, 201);
const note = created.data;
assert.ok(note);
assert.match(note.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);
const path = { note_id: note.id };
/** A request on the first note, with these headers. */
const onNote = (header: Record<string, string> = {}) => ({ params: { path, header } });

const older = await client.POST('/notes', { body: { title: 'second', content: '' } });
assert.ok(older.data);
const page = await client.GET('/notes', { params: { query: { limit: 1 } } });
assert.deepEqual(
  page.data?.map(({ id }) => id),
  [older.data.id],
);
const next = `</notes?limit=1&before=${older.data.id}>; rel="next"`;
assert.equal(page.response.headers.get('link'), next);
const all = await client.GET('/notes');
assert.deepEqual(all.data?.map(({ id }) => id).join(), `${older.data.id},${note.id}`);

const read = await client.GET('/notes/{note_id}', onNote());
assert.deepEqual(read.data, note);
const etag = read.response.headers.get('etag');
assert.ok(etag);
const unchanged = await client.GET('/notes/{note_id}', onNote({ 'If-None-Match': etag }));
assert.equal(unchanged.response.status, 304);

// A partial update: one field, or none at all.
const renamed = await client.PUT('/notes/{note_id}', { ...onNote(), body: { title: 'renamed' } });
assert.equal(renamed.data?.title, 'renamed');
assert.equal(renamed.data.content, 'hello');
const untouched = await client.PUT('/notes/{note_id}', { ...onNote(), body: {} });
assert.deepEqual(untouched.data, renamed.data);
const rewrite = { title: null, content: 'rewritten' };
const nulls = await client.PUT('/notes/{note_id}', { ...onNote(), body: rewrite });
assert.deepEqual([nulls.data?.title, nulls.data?.content], ['renamed', 'rewritten']);

// Pydantic's validation entries, with what the failed rule was given.
const long = { title: 'x'.repeat(101) };
const tooLong = await client.PUT('/notes/{note_id}', { ...onNote(), body: long });
assert.equal(tooLong.response.status, 422);
assert.ok(tooLong.error && Array.isArray(tooLong.error.detail));
assert.equal(tooLong.error.detail[0].type, 'string_too_long');
assert.equal(tooLong.error.detail[0].ctx?.max_length, 100);
const badPage = await client.GET('/notes', { params: { query: { limit: 0 } } });
assert.equal(badPage.response.status, 422);
assert.ok(badPage.error && Array.isArray(badPage.error.detail));
assert.deepEqual(badPage.error.detail[0].loc, ['query', 'limit']);
assert.equal(badPage.error.detail[0].ctx?.ge, 1);

const zstd = { 'Content-Encoding': 'zstd' };
const encoded = await client.POST('/notes', { body: { title: 't', content: 'c' }, headers: zstd });
assert.equal(encoded.response.status, 415);
assert.equal(encoded.error?.detail, 'Unsupported Content-Encoding: zstd');

// The trailing-slash redirect, as documented: 307 to the path without it, whatever the method.
for (const redirected of [
  await client.GET('/notes/', { redirect: 'manual' }),
  await client.POST('/notes/', { redirect: 'manual' }),
]) {
  assert.equal(redirected.response.status, 307);
  assert.equal(redirected.response.headers.get('location'), '/notes');
}

const stale = await client.DELETE('/notes/{note_id}', onNote({ 'If-Match': etag }));
assert.equal(stale.response.status, 412);
assert.equal(typeof stale.error?.detail, 'string');
const deleted = await client.DELETE('/notes/{note_id}', onNote());
assert.deepEqual(deleted.data, { message: 'ノートを削除しました' });
const gone = await client.GET('/notes/{note_id}', onNote());
assert.equal(gone.response.status, 404);
assert.deepEqual(gone.error, { detail: 'ノートが見つかりません' });
