import { expect, test } from 'vitest';
import { useNotes8000 } from '../support/notes8000.js';
import { JSON_TYPE } from '../support/notesServices.js';

const { call } = useNotes8000();

test('notes8000 GET /health answers {status: "healthy"}', async () => {
  const answer = await call('GET', '/health');
  expect([answer.status, answer.json]).toEqual([200, { status: 'healthy' }]);
  expect(answer.headers['content-type']).toMatch(JSON_TYPE);
});
