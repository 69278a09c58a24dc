import { describe, expect, test } from 'vitest';
import { useNotes8000 } from '../support/notes8000.js';

const { call } = useNotes8000();

describe('notes8000 GET /health', () => {
  test('GET /health answers {status: "healthy"}', async () => {
    const answer = await call('GET', '/health');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json).toEqual({ status: 'healthy' });
  });
});
