import { notes8000 } from '../../server/services.js';
import { notes8080 } from '../../server/services.js';

/**
 * Both notes services, for tests of what they share: a note's body in each one's shape, the
 * status each answers a reused Idempotency-Key with, and the field its errors are worded in.
 */
export const NOTES_SERVICES = [
  {
    name: 'notes8080',
    descriptor: notes8080,
    note: (title: string, text = 'x') => ({ title, body: text }),
    conflict: 400,
    error: 'error',
    invalid: 400,
  },
  {
    name: 'notes8000',
    descriptor: notes8000,
    note: (title: string, text = 'x') => ({ title, content: text }),
    conflict: 422,
    error: 'detail',
    invalid: 422,
  },
] as const;
