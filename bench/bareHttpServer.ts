import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The HTTP limit: the least a Node HTTP server can do for a request — answer a small fixed JSON
 * body. Run as its own process (like the services), it prints its port and serves until killed.
 */
const body = JSON.stringify({ status: 'healthy' });
const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };

const server = http.createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
