import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import { listenVariables, type Listen } from './config.js';
import { StartupError } from './errors.js';

export interface RunningServer {
  url: string;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

/** What one service lets its clients hold. */
export interface ConnectionLimits {
  /** Open connections at most; past it the oldest connection with no request in flight is closed. */
  maxConnections: number;
  /** A connection on which no byte moves for this long is closed (a client that stopped reading, say). */
  idleTimeoutMs: number;
  /** Time to send a request's headers, counted from the connection or the previous answer. */
  headersTimeoutMs: number;
}

const DEFAULT_LIMITS: ConnectionLimits = { maxConnections: 10_000, idleTimeoutMs: 30_000, headersTimeoutMs: 10_000 };

/**
 * Serves `app` at `address`, with every client-held resource bounded: the time to send headers
 * and a whole request (30 s at least), idle keep-alive (5 s), a connection on which nothing moves,
 * and the number of connections. Node checks the first two every second rather than every 30 s,
 * so they fire on time. A connection past the budget closes the oldest one that has no request
 * in flight (idle, or still sending its headers) instead of refusing the newcomer: connections
 * opened and left idle cannot lock clients out.
 */
export function listen(app: Koa, { host, port }: Listen, limits: ConnectionLimits = DEFAULT_LIMITS): Promise<RunningServer> {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(30_000, limits.headersTimeoutMs),
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
    },
    app.callback(),
  );
  server.timeout = limits.idleTimeoutMs;

  // Requests in flight per connection, in the order the connections were opened.
  const inFlight = new Map<Socket, number>();
  const stalls = watchStalledAnswers(inFlight, limits.idleTimeoutMs);
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
    if (inFlight.size > limits.maxConnections) closeOldestIdle(inFlight, socket);
  });
  // Once closing, every answer not yet sent ends its connection, so kept-alive clients cannot
  // start new requests on old connections and close() ends as soon as the last answer is out.
  let closing = false;
  const open = new Set<http.ServerResponse>();
  // One listener for every answer, rather than a closure made for each request; `on` rather than
  // `once`, as a response closes once (no wrapper to make and remove).
  function answered(this: http.ServerResponse) {
    open.delete(this);
    const requests = inFlight.get(this.req.socket);
    if (requests !== undefined) inFlight.set(this.req.socket, requests - 1);
  }
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
    open.add(res);
    inFlight.set(req.socket, (inFlight.get(req.socket) ?? 0) + 1);
    res.on('close', answered);
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
            clearInterval(stalls);
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

/** Makes room for `newcomer`: the oldest connection with no request in flight goes, or, when every one is busy, the newcomer. */
function closeOldestIdle(inFlight: Map<Socket, number>, newcomer: Socket): void {
  for (const [socket, requests] of inFlight) {
    if (requests === 0 && socket !== newcomer) {
      socket.destroy();
      return;
    }
  }
  newcomer.destroy();
}

/**
 * Binds every service's address before any is announced: when one cannot listen, the others are
 * closed again and the start fails with a line per address that failed, naming its variables.
 */
export async function listenAll(services: { name: string; app: Koa; address: Listen }[], limits: ConnectionLimits): Promise<RunningServer[]> {
  const results = await Promise.allSettled(services.map(({ app, address }) => listen(app, address, limits)));
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

/**
 * Closes connections whose answer has not moved for `idleTimeoutMs`: a client that stopped
 * reading. Node's own socket timeout cannot say so on time: it forgives a socket whose write
 * queue changed since the last write call, so a client that stops reading right after the kernel
 * took a first part of the answer is cut only after twice the timeout. Here the bytes the socket
 * has been given and has not handed to the kernel yet (`writableLength`, which counts a write
 * until it is wholly taken) are looked at every second, and the clock restarts whenever they
 * change: streamed answers are written in pieces of 96 KiB at most (see jsonArray.ts), so that a
 * slow reader's progress shows.
 */
function watchStalledAnswers(inFlight: Map<Socket, number>, idleTimeoutMs: number): NodeJS.Timeout {
  const stalled = new WeakMap<Socket, { unsent: number; since: number }>();
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [socket, requests] of inFlight) {
      if (requests === 0) continue;
      const unsent = socket.writableLength;
      const last = stalled.get(socket);
      if (unsent === 0 || last?.unsent !== unsent) stalled.set(socket, { unsent, since: now });
      else if (now - last.since >= idleTimeoutMs) socket.destroy();
    }
  }, 1_000);
  timer.unref();
  return timer;
}
