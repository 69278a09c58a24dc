import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Listen } from './config.js';

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
