import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Listen } from './config.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

export function listen(app: Koa, { host, port }: Listen): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  // Slow or idle clients cannot hold a socket forever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${bound}`,
        port: bound,
        close: (graceMs = 8_000) =>
          new Promise<void>((done) => {
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
