import http from 'node:http';

export interface RawRequest {
  method: string;
  /** The request target exactly as sent (already percent-encoded). */
  path: string;
  headers?: http.OutgoingHttpHeaders;
  body?: Buffer | string;
  agent?: http.Agent;
  /** A request without an answer by then rejects with a `TimeoutError`: a hang, not a slow answer. */
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** When the request was sent and how long the full answer took, in ms (performance.now clock). */
  startedAt: number;
  ms: number;
}

export class TimeoutError extends Error {
  name = 'TimeoutError';
}

/**
 * One HTTP request through `node:http`, which (unlike fetch) sends bytes as given: raw paths,
 * invalid UTF-8 bodies, odd content types, repeated headers.
 */
export function send(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        method: request.method,
        path: request.path,
        // Node sends a GET, DELETE or OPTIONS body with neither length nor chunking unless told.
        headers:
          request.body === undefined || hasHeader(request.headers, 'content-length')
            ? request.headers
            : { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        agent: request.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            startedAt,
            ms: performance.now() - startedAt,
          });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new TimeoutError(`${request.method} ${request.path}: no answer in ${request.timeoutMs} ms`));
    }, request.timeoutMs ?? 15_000);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(request.body);
  });
}

function hasHeader(headers: http.OutgoingHttpHeaders | undefined, name: string): boolean {
  return Object.keys(headers ?? {}).some((key) => key.toLowerCase() === name);
}

export function jsonRequest(method: string, path: string, value: unknown, agent?: http.Agent): RawRequest {
  return {
    method,
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
    agent,
  };
}

/** The body parsed as JSON, or undefined when it is not JSON. */
export function parseJson(response: RawResponse): unknown {
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
