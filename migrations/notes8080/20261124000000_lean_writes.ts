import { leanWritesMigration } from '../../server/shared/safeWrites.js';

/**
 * A recorded create's answer as the service now renders it (created_at: RFC 3339 in UTC with
 * milliseconds).
 */
const ANSWER = `SELECT row_to_json(note)::text FROM (SELECT (row->>'id')::int AS id, row->>'title' AS title, row->>'body' AS body,
  to_char((row->>'created_at')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at) AS note`;

export const { up, down } = leanWritesMigration('body', ANSWER);
