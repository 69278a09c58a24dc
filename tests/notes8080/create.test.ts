import { describe, expect, it } from 'vitest';
import {
  BODY_LIMIT,
  JSON_TYPE,
  jsonText,
  TIMESTAMP,
  useNotes8080,
  type Note,
} from '../support/notes8080.js';
import { invalidBodies } from '../support/notes8080Invalid.js';

describe('notes8080 POST /notes', () => {
  const { service, call, create, storedNotes } = useNotes8080();

  it('answers 201 with the stored note, as a later read shows it', async () => {
    const response = await call('POST', '/notes', {
      json: { title: 'Groceries', body: 'milk, eggs' },
    });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toMatch(JSON_TYPE);
    const note = response.json as Note;
    expect(note).toEqual({
      id: expect.any(Number),
      title: 'Groceries',
      body: 'milk, eggs',
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Math.abs(Date.parse(note.created_at) - Date.now())).toBeLessThan(60_000);
    expect((await call('GET', `/notes/${note.id}`)).json).toEqual(note);
    expect((await storedNotes())[0]).toEqual(note);
  });

  it('assigns increasing ids', async () => {
    const first = await create({ title: 'first' });
    const second = await create({ title: 'second' });
    expect(second.id).toBeGreaterThan(first.id);
  });

  it.each([
    ['omitted', { title: 'no body' }],
    ['null', { title: 'null body', body: null }],
    ['empty', { title: 'empty body', body: '' }],
  ])('stores an empty body when it is %s', async (_, input) => {
    const note = await create(input);
    expect(note.body).toBe('');
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).body).toBe('');
  });

  it('ignores id, created_at and unknown fields in the body', async () => {
    const note = await create({
      id: 999_999,
      created_at: '2000-01-01T00:00:00.000Z',
      title: 't',
      colour: 'red',
    });
    expect(note.id).not.toBe(999_999);
    expect(note.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    expect(Object.keys(note).sort()).toEqual(['body', 'created_at', 'id', 'title']);
    expect((await call('GET', '/notes/999999')).status).toBe(404);
  });

  it.each([
    ['200 ASCII characters', 'a'.repeat(200)],
    ['200 Japanese characters', 'あ'.repeat(200)],
    ['200 emoji (400 UTF-16 units)', '😀'.repeat(200)],
  ])('accepts a title of %s and stores it intact', async (_, title) => {
    const note = await create({ title });
    expect(note.title).toBe(title);
    expect(((await call('GET', `/notes/${note.id}`)).json as Note).title).toBe(title);
  });

  it('accepts a JSON content type with a charset', async () => {
    const response = await call(
      'POST',
      '/notes',
      jsonText('{"title":"charset"}', 'application/json; charset=utf-8'),
    );
    expect(response.status).toBe(201);
  });

  it('accepts a body of exactly the size limit', async () => {
    const frame = '{"title":"big","body":""}';
    const body = 'x'.repeat(BODY_LIMIT - frame.length);
    const response = await call('POST', '/notes', jsonText(JSON.stringify({ title: 'big', body })));
    expect(response.status).toBe(201);
    expect((response.json as Note).body).toHaveLength(body.length);
  });

  describe('rejected bodies', () => {
    it.each(invalidBodies)(
      'answers %s with its status and message, storing nothing',
      async (_, request, status, error) => {
        const before = await storedNotes();
        const response = await call('POST', '/notes', request);
        expect(response.status).toBe(status);
        expect(response.headers['content-type']).toMatch(JSON_TYPE);
        expect(response.json).toEqual({ error });
        expect(await storedNotes()).toEqual(before);
        expect(service().logs.errors()).toEqual([]);
      },
    );

    it('keeps serving after an oversized body', async () => {
      const response = await call('POST', '/notes', {
        json: { title: 'x', body: 'y'.repeat(BODY_LIMIT * 4) },
      });
      expect(response.status).toBe(413);
      expect((await call('GET', '/notes')).status).toBe(200);
      expect((await call('POST', '/notes', { json: { title: 'after' } })).status).toBe(201);
    });
  });

  it('gives 100 concurrent creates 100 distinct ids, all listed', async () => {
    const created = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call('POST', '/notes', { json: { title: `concurrent ${i}` } }),
      ),
    );
    expect(created.map((response) => response.status)).toEqual(Array(100).fill(201));
    const ids = created.map((response) => (response.json as Note).id);
    expect(new Set(ids).size).toBe(100);
    const listed = new Set((await storedNotes()).map((note) => note.id));
    expect(ids.every((id) => listed.has(id))).toBe(true);
  });
});
