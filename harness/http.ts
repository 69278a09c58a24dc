import http from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/**
 * One HTTP request, sent through `node:http`, which (unlike fetch) sends bytes as given: raw paths,
 * invalid UTF-8, odd content types, repeated headers.
 */
export interface Request {
  method: string;
  /** The request target exactly as sent (already percent-encoded). */
  path: string;
  headers?: http.OutgoingHttpHeaders;
  /** Sent as it is. */
  body?: Buffer | string;
  /** Sent as JSON text with `Content-Type: application/json` (unless `headers` name another). */
  json?: unknown;
  agent?: http.Agent;
  /** The address the request leaves from (127.0.0.2, say: another client of the same machine). */
  localAddress?: string;
  /** Unanswered by then, the request rejects with a `TimeoutError`: a hang, not a slow answer. */
  timeoutMs?: number;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body as UTF-8 text. */
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
  /** When the request was sent (performance.now) and how long the whole answer took, in ms. */
  startedAt: number;
  ms: number;
}

export class TimeoutError extends Error {
  name = 'TimeoutError';
}

export function send(baseUrl: string, request: Request): Promise<Reply> {
  const { hostname, port } = new URL(baseUrl);
  const body = request.json === undefined ? request.body : JSON.stringify(request.json);
  const headers = {
    ...(request.json !== undefined && { 'content-type': 'application/json' }),
    ...request.headers,
  };
  // Node sends a GET, DELETE or OPTIONS body with neither length nor chunking unless told.
  const sized = Object.keys(headers).some((name) => name.toLowerCase() === 'content-length');
  if (body !== undefined && !sized) headers['content-length'] = Buffer.byteLength(body);
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method: request.method,
        path: request.path,
        headers,
        agent: request.agent ?? false,
        localAddress: request.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          resolve(reply(res.statusCode ?? 0, res.headers, Buffer.concat(chunks), startedAt));
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(
        new TimeoutError(`${request.method} ${request.path}: no answer in ${request.timeoutMs} ms`),
      );
    }, request.timeoutMs ?? 15_000);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}

function reply(
  status: number,
  headers: http.IncomingHttpHeaders,
  body: Buffer,
  startedAt: number,
): Reply {
  return {
    status,
    headers,
    body,
    get text() {
      return body.toString('utf8');
    },
    get json() {
      try {
        return JSON.parse(body.toString('utf8'));
      } catch {
        return undefined;
      }
    },
    startedAt,
    ms: performance.now() - startedAt,
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Starts `server` listening on a port the system chooses (never one picked beforehand, which
 * something else could take in between), on `host` or every interface, and resolves with that port.
 */
export function listenOnFreePort(server: Server, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
