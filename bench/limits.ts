import { spawn } from 'node:child_process';
import type pg from 'pg';
import { hashPassword, matchesHash } from '../server/auth/passwords.js';
import { measureHttp, type HttpLoad, type LoadResult, type Timing } from './load.js';
import { ROOT } from './services.js';
import { measureWork } from './work.js';

/**
 * The limits of this machine, measured with the same load generator as the scenarios:
 * - HTTP: a bare node:http server (its own process) answering a small fixed JSON body;
 * - database: the SQL a scenario issues, through a pg Pool the size of the service's, no HTTP;
 * - password hashing: the login's scrypt verification with the service's own code and cost.
 */

export interface BareHttpServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The bare `node:http` server, or (`koa`) Koa answering the same body: the floor of any Koa route. */
export async function startBareHttpServer(framework?: 'koa'): Promise<BareHttpServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bareHttpServer.ts', ...(framework ? [framework] : [])], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('\n')) resolve(Number(output.trim()));
    });
    child.once('exit', (code) => reject(new Error(`bare HTTP server exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The scenario's own requests, answered by the bare server (which answers every request alike). */
export function httpLimit(server: BareHttpServer, load: HttpLoad, timing: Timing): Promise<LoadResult> {
  return measureHttp({ ...load, url: server.url }, timing, server.pid);
}

export interface Statement {
  text: string;
  values: unknown[];
}

/** Sends each request's statements in order, each on a pooled connection, as the service's store does. */
export function databaseLimit(
  pool: pg.Pool,
  statementsForNextRequest: () => Statement[],
  concurrency: number,
  timing: Timing,
): Promise<LoadResult> {
  return measureWork(
    async () => {
      for (const statement of statementsForNextRequest()) await pool.query(statement);
    },
    concurrency,
    timing,
  );
}

/** One successful login's password check, on libuv's thread pool like the service's. */
export function hashLimit(password: string, cost: number, concurrency: number, timing: Timing): Promise<LoadResult> {
  const stored = hashPassword(password, cost);
  return measureWork(
    async () => {
      if (!(await matchesHash(password, stored))) throw new Error('password check failed');
    },
    concurrency,
    timing,
  );
}
