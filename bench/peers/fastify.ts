import Fastify, { type FastifyError } from 'fastify';
import pg from 'pg';

/**
 * The Fastify peer: docs/specs/notes-service-8080.md, `GET /health` and `GET /api/me` (a cookie
 * looked up in a Map), written with Fastify 5 and `pg` as a performance-minded Node developer
 * would: JSON-schema validation and response schemas compiled by Fastify, named prepared
 * statements, the four security headers on every answer. Its notes in a schema of its own.
 * Run with DATABASE_URL, DB_POOL_MAX and BENCH_TOKEN (the session `/api/me` knows), it prints its
 * port and serves until SIGTERM.
 */
const SCHEMA = 'fastify_peer';
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10),
  options: `-c search_path=${SCHEMA}`,
});
// A connection the server drops while idle (PostgreSQL stopping first, say) must not end the peer.
pool.on('error', () => undefined);
await pool.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
await pool.query(`CREATE TABLE IF NOT EXISTS notes (
  id serial PRIMARY KEY,
  title varchar(200) NOT NULL,
  body text NOT NULL DEFAULT '',
  created_at timestamptz(3) NOT NULL DEFAULT now()
)`);

const sessions = new Map([
  [process.env.BENCH_TOKEN ?? '', { id: '1', email: 'user@example.com', role: 'user' }],
]);

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const COLUMNS = 'id, title, body, created_at';
const named = (name: string, text: string) => ({ name, text });
const STATEMENTS = {
  list: named('list', `SELECT ${COLUMNS} FROM notes ORDER BY id DESC`),
  find: named('find', `SELECT ${COLUMNS} FROM notes WHERE id = $1`),
  insert: named('insert', `INSERT INTO notes (title, body) VALUES ($1, $2) RETURNING ${COLUMNS}`),
  replace: named(
    'replace',
    `UPDATE notes SET title = $2, body = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
  ),
  remove: named('remove', 'DELETE FROM notes WHERE id = $1'),
};

const Note = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    title: { type: 'string' },
    body: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'title', 'body', 'created_at'],
} as const;
const NoteInput = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    body: { type: ['string', 'null'] },
  },
  required: ['title'],
} as const;
const NoteId = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
  required: ['id'],
} as const;

type NoteBody = { title: string; body?: string | null };

const NOT_FOUND = { error: 'ノートが見つかりません' };

const app = Fastify({ logger: false });
app.addHook('onRequest', (_request, reply, done) => {
  reply.headers(SECURITY_HEADERS);
  done();
});
app.setErrorHandler((error: FastifyError, _request, reply) => {
  const status = error.statusCode ?? 500;
  void reply.code(status).send({ error: status < 500 ? error.message : 'internal server error' });
});

app.get(
  '/health',
  { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } } },
  async () => ({ status: 'healthy' }),
);

app.get('/api/me', async (request, reply) => {
  const token = /(?:^|;\s*)token=([^;]*)/.exec(request.headers.cookie ?? '')?.[1];
  if (!token) return reply.code(401).send({ error: 'unauthenticated' });
  const user = sessions.get(token);
  if (!user) return reply.code(401).send({ error: 'invalid session' });
  return { user };
});

app.get(
  '/notes',
  { schema: { response: { 200: { type: 'array', items: Note } } } },
  async () => (await pool.query(STATEMENTS.list)).rows,
);

app.post<{ Body: NoteBody }>(
  '/notes',
  { schema: { body: NoteInput, response: { 201: Note } } },
  async (request, reply) => {
    const { rows } = await pool.query({
      ...STATEMENTS.insert,
      values: [request.body.title, request.body.body ?? ''],
    });
    return reply.code(201).send(rows[0]);
  },
);

app.get<{ Params: { id: number } }>(
  '/notes/:id',
  { schema: { params: NoteId, response: { 200: Note } } },
  async (request, reply) => {
    const { rows } = await pool.query({ ...STATEMENTS.find, values: [request.params.id] });
    return rows[0] ?? reply.code(404).send(NOT_FOUND);
  },
);

app.put<{ Params: { id: number }; Body: NoteBody }>(
  '/notes/:id',
  { schema: { params: NoteId, body: NoteInput, response: { 200: Note } } },
  async (request, reply) => {
    const { rows } = await pool.query({
      ...STATEMENTS.replace,
      values: [request.params.id, request.body.title, request.body.body ?? ''],
    });
    return rows[0] ?? reply.code(404).send(NOT_FOUND);
  },
);

app.delete<{ Params: { id: number } }>(
  '/notes/:id',
  { schema: { params: NoteId } },
  async (request, reply) => {
    const { rowCount } = await pool.query({ ...STATEMENTS.remove, values: [request.params.id] });
    return rowCount ? reply.code(204).send() : reply.code(404).send(NOT_FOUND);
  },
);

await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${(app.server.address() as { port: number }).port}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await pool.end();
  process.exit(0);
});
