import { leanWritesMigration } from '../../server/shared/safeWrites.js';

/**
 * A recorded create's answer as the service now renders it: the timestamps it recorded, without a
 * fraction of exactly zero.
 */
const ANSWER = `SELECT row_to_json(note)::text FROM (SELECT (row->>'id')::int AS id, row->>'title' AS title, row->>'content' AS content,
  regexp_replace(row->>'created_at', '\\.000000$', '') AS created_at, regexp_replace(row->>'updated_at', '\\.000000$', '') AS updated_at) AS note`;

export const { up, down } = leanWritesMigration('content', ANSWER);
