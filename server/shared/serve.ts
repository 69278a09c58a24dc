import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { listenVariables, type Listen } from './config.js';
import { StartupError } from './errors.js';

export interface RunningServer {
  url: string;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

export function listen(app: Koa, { host, port }: Listen): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  // Slow or idle clients cannot hold a socket forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  // Once closing, every answer not yet sent ends its connection, so kept-alive clients cannot
  // start new requests on old connections and close() ends as soon as the last answer is out.
  let closing = false;
  const open = new Set<http.ServerResponse>();
  server.on('request', (_req, res: http.ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
    open.add(res);
    res.once('close', () => open.delete(res));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${bound}`,
        close: (graceMs = 8_000) =>
          new Promise<void>((done) => {
            closing = true;
            for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
            const force = setTimeout(() => server.closeAllConnections(), graceMs);
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/**
 * Binds every service's address before any is announced: when one cannot listen, the others are
 * closed again and the start fails with a line per address that failed, naming its variables.
 */
export async function listenAll(services: { name: string; app: Koa; address: Listen }[]): Promise<RunningServer[]> {
  const results = await Promise.allSettled(services.map(({ app, address }) => listen(app, address)));
  const failures = results.flatMap((result, index) => {
    if (result.status === 'fulfilled') return [];
    const { name, address } = services[index]!;
    const { host, port } = listenVariables(name);
    const reason = LISTEN_FAILURES[(result.reason as NodeJS.ErrnoException).code ?? ''] ?? (result.reason as Error).message;
    return [`${name} cannot listen on ${address.host}:${address.port} (${host}, ${port}): ${reason}`];
  });
  const servers = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  if (failures.length === 0) return servers;
  await Promise.all(servers.map((server) => server.close(0)));
  throw new StartupError(failures.join('\n'));
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another instance, or another program)',
  EACCES: 'not allowed to use this port (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'no network interface of this machine has this address',
};
