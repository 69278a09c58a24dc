import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import pg from 'pg';
import * as yup from 'yup';

// The plain Koa peer: route for route what the Fastify peer serves (fastify.ts, run the same way),
// on the card's stack as its documentation shows: Koa, @koa/router, @koa/bodyparser, yup and
// `pg`'s `pool.query` with the Fastify peer's SQL, no safety extras, its notes in a schema of its
// own. An update looks the note up, then updates it, as the spec orders: two statements.
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10),
  options: '-c search_path=koa_peer',
});
// A connection the server drops while idle (PostgreSQL stopping first, say) must not end the peer.
pool.on('error', () => undefined);
await pool.query('CREATE SCHEMA IF NOT EXISTS koa_peer');
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
const SQL = {
  list: `SELECT ${COLUMNS} FROM notes ORDER BY id DESC`,
  find: `SELECT ${COLUMNS} FROM notes WHERE id = $1`,
  insert: `INSERT INTO notes (title, body) VALUES ($1, $2) RETURNING ${COLUMNS}`,
  replace: `UPDATE notes SET title = $2, body = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
  remove: 'DELETE FROM notes WHERE id = $1',
};

const noteInput = yup.object({
  title: yup.string().required().max(200),
  body: yup.string().nullable(),
});
const noteId = yup.number().required().integer().min(1).max(2_147_483_647);

const NOT_FOUND = 'ノートが見つかりません';

const app = new Koa();
app.use(async (ctx, next) => {
  ctx.set(SECURITY_HEADERS);
  try {
    await next();
  } catch (error) {
    const { status = 500, message } = error as { status?: number; message: string };
    ctx.status = error instanceof yup.ValidationError ? 400 : status;
    ctx.body = { error: ctx.status < 500 ? message : 'internal server error' };
  }
});
app.use(bodyParser());

const router = new Router();

router.get('/health', (ctx) => {
  ctx.body = { status: 'healthy' };
});

router.get('/api/me', (ctx) => {
  const token = ctx.cookies.get('token');
  const user = token && sessions.get(token);
  if (!user) ctx.throw(401, token ? 'invalid session' : 'unauthenticated');
  ctx.body = { user };
});

router.get('/notes', async (ctx) => {
  ctx.body = (await pool.query(SQL.list)).rows;
});

router.post('/notes', async (ctx) => {
  const { title, body } = await noteInput.validate(ctx.request.body);
  const { rows } = await pool.query(SQL.insert, [title, body ?? '']);
  ctx.status = 201;
  ctx.body = rows[0];
});

router.get('/notes/:id', async (ctx) => {
  const id = await noteId.validate(ctx.params.id);
  const { rows } = await pool.query(SQL.find, [id]);
  ctx.body = rows[0] ?? ctx.throw(404, NOT_FOUND);
});

router.put('/notes/:id', async (ctx) => {
  const id = await noteId.validate(ctx.params.id);
  const found = await pool.query(SQL.find, [id]);
  if (found.rowCount === 0) ctx.throw(404, NOT_FOUND);
  const { title, body } = await noteInput.validate(ctx.request.body);
  const { rows } = await pool.query(SQL.replace, [id, title, body ?? '']);
  ctx.body = rows[0];
});

router.delete('/notes/:id', async (ctx) => {
  const id = await noteId.validate(ctx.params.id);
  const { rowCount } = await pool.query(SQL.remove, [id]);
  if (rowCount === 0) ctx.throw(404, NOT_FOUND);
  ctx.status = 204;
});

app.use(router.routes()).use(router.allowedMethods());

const server = app.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${(server.address() as { port: number }).port}\n`),
);
process.on('SIGTERM', () => server.close(() => void pool.end().finally(() => process.exit(0))));
