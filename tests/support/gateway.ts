import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { forward as forwardTo } from '../../harness/reverseProxy.js';

/**
 * A real reverse proxy in front of a real server, as deployments have one, that can be made
 * to fail the way proxies do: `badGateway` answers 502 with an HTML page (an answer with no
 * `error` field), `reset` drops the connection (a network failure), `hold` keeps requests
 * waiting until `release()`.
 */
export type GatewayMode = 'forward' | 'badGateway' | 'reset' | 'hold';

export interface Gateway {
  url: string;
  mode: GatewayMode;
  release(): void;
  close(): Promise<void>;
}

export async function startGateway(upstream: string): Promise<Gateway> {
  const target = new URL(upstream);
  let held: (() => void)[] = [];

  const forward = (req: http.IncomingMessage, res: http.ServerResponse) =>
    forwardTo(target, req, res);

  const server = http.createServer((req, res) => {
    // Pages and their assets always pass; only the API feels the failure.
    if (gateway.mode === 'forward' || !req.url?.startsWith('/api/')) return forward(req, res);
    if (gateway.mode === 'badGateway') {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');
    } else if (gateway.mode === 'reset') {
      req.socket.destroy();
    } else {
      held.push(() => forward(req, res));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const gateway: Gateway = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mode: 'forward',
    release() {
      const waiting = held;
      held = [];
      waiting.forEach((go) => go());
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return gateway;
}
