import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

/**
 * A reverse proxy in a process of its own, as deployments put one in front: it forwards every
 * request to `upstream`, appending its client's address to X-Forwarded-For and saying the scheme
 * in X-Forwarded-Proto, as nginx's `$proxy_add_x_forwarded_for` does.
 */
export interface ReverseProxy {
  url: string;
  stop(): Promise<void>;
}

export async function startReverseProxy(upstream: string): Promise<ReverseProxy> {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, upstream], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the reverse proxy exited (${code})`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Sends `req` on to `target` with `headers`, and its answer back; a failure drops the client. */
export function forward(
  target: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  headers = req.headers,
): void {
  const { hostname: host, port } = target;
  const options = { host, port, method: req.method, path: req.url, headers };
  const proxied = http.request(options, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  proxied.on('error', () => res.destroy());
  req.pipe(proxied);
}

function serve(upstream: string): void {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress]
      .filter(Boolean)
      .join(', ');
    const headers = {
      ...req.headers,
      'x-forwarded-for': forwardedFor,
      'x-forwarded-proto': 'https',
    };
    forward(target, req, res, headers);
  });
  server.listen(0, '127.0.0.1', () =>
    console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
  );
  process.on('SIGTERM', () => process.exit(0));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) serve(process.argv[2]!);
