import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

/**
 * The HTTP limit: the least a Node HTTP server can do for a request — answer a small fixed JSON
 * body. Run as its own process (like the services), it prints its port and serves until killed.
 * With the argument `koa`, Koa answers the same body from one middleware instead: the least a
 * Koa service can do, the floor that no Koa route can go below.
 */
const answer = { status: 'healthy' };
const body = JSON.stringify(answer);
const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };

const koa = new Koa().use((ctx) => {
  ctx.body = answer;
});
const server = http.createServer(
  process.argv[2] === 'koa'
    ? koa.callback()
    : (_request, response) => {
        response.writeHead(200, headers);
        response.end(body);
      },
);
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
