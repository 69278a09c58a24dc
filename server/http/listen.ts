import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import { listenVariables, type Listen } from '../config.js';
import { StartupError } from './errors.js';

export interface RunningServer {
  url: string;
  /**
   * Stops accepting, lets requests in flight finish (up to `graceMs`), then closes what is left.
   */
  close(graceMs?: number): Promise<void>;
}

/** What one service lets its clients hold. */
export interface ConnectionLimits {
  /**
   * Open connections at most; past it the oldest connection with no request in flight is closed.
   */
  maxConnections: number;
  /**
   * A connection on which no byte moves for this long is closed (a client that stopped reading,
   * say).
   */
  idleTimeoutMs: number;
  /** Time to send a request's headers, counted from the connection or the previous answer. */
  headersTimeoutMs: number;
}

const DEFAULT_LIMITS: ConnectionLimits = {
  maxConnections: 10_000,
  idleTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
};

/**
 * Serves `app` at `address`, with every client-held resource bounded: the time to send headers
 * and a whole request (30 s at least), idle keep-alive (5 s), a connection on which nothing moves
 * while it owes the server bytes or is owed them, and the number of connections. Node checks the
 * first two every second rather than every 30 s, so they fire on time. A connection past the
 * budget closes the oldest one that has no request in flight (idle, or still sending its headers)
 * instead of refusing the newcomer: connections opened and left idle cannot lock clients out.
 *
 * What is kept is kept per connection, not per request: each connection's latest answer (Node
 * answers a connection's requests in order, so once it is finished none is in flight). A request
 * adds no listener and no timer: Node's own idle timeout (`server.timeout`) is left off, as it
 * would move a timer at every read and write of every socket; the stall watch below, a look at
 * each connection every second, covers what it covered.
 */
export function listen(
  app: Koa,
  { host, port }: Listen,
  limits: ConnectionLimits = DEFAULT_LIMITS,
): Promise<RunningServer> {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(30_000, limits.headersTimeoutMs),
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 1_000,
    },
    app.callback(),
  );
  server.timeout = 0;

  // Open connections, oldest first, each with its latest answer once it has had a request.
  const connections = new Map<Socket, http.ServerResponse | undefined>();
  const stalls = watchStalls(connections, limits.idleTimeoutMs);
  server.on('connection', (socket: Socket) => {
    connections.set(socket, undefined);
    socket.once('close', () => connections.delete(socket));
    if (connections.size > limits.maxConnections) closeOldestIdle(connections, socket);
  });
  // Once closing, every answer not yet sent ends its connection, so kept-alive clients cannot
  // start new requests on old connections and close() ends as soon as the last answer is out.
  let closing = false;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
    connections.set(req.socket, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      const shown =
        host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${bound}`,
        close: (graceMs = 8_000) =>
          new Promise<void>((done) => {
            closing = true;
            clearInterval(stalls);
            for (const res of connections.values())
              if (res && !res.headersSent) res.setHeader('Connection', 'close');
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

/** Whether the connection whose latest answer is `res` has a request in flight. */
const inFlight = (res: http.ServerResponse | undefined): res is http.ServerResponse =>
  res !== undefined && !res.writableFinished;

/**
 * Makes room for `newcomer`: the oldest connection with no request in flight goes, or, when every
 * one is busy, the newcomer.
 */
function closeOldestIdle(
  connections: Map<Socket, http.ServerResponse | undefined>,
  newcomer: Socket,
): void {
  for (const [socket, latest] of connections) {
    if (!inFlight(latest) && socket !== newcomer) {
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
export async function listenAll(
  services: { name: string; app: Koa; address: Listen }[],
  limits: ConnectionLimits,
): Promise<RunningServer[]> {
  const results = await Promise.allSettled(
    services.map(({ app, address }) => listen(app, address, limits)),
  );
  const failures = results.flatMap((result, index) => {
    if (result.status === 'fulfilled') return [];
    const { name, address } = services[index]!;
    const { host, port } = listenVariables(name);
    const reason =
      LISTEN_FAILURES[(result.reason as NodeJS.ErrnoException).code ?? ''] ??
      (result.reason as Error).message;
    return [
      `${name} cannot listen on ${address.host}:${address.port} (${host}, ${port}): ${reason}`,
    ];
  });
  const servers = results.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
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
 * Closes connections on which nothing has moved for `idleTimeoutMs` while a request is in flight
 * and waits on its client: a body that stopped coming, or an answer the client stopped reading
 * (a request the server is still working on waits on nobody). Node's own socket timeout cannot
 * say the latter on time: it forgives a socket whose write queue changed since the last write
 * call, so a client that stops reading right after the kernel took a first part of the answer is
 * cut only after twice the timeout. Here the bytes read from the socket and those it has been
 * given and has not handed to the kernel yet (`writableLength`, which counts a write until it is
 * wholly taken) are looked at every second, and the clock restarts whenever they change: streamed
 * answers are written in pieces of 96 KiB at most (see jsonArray.ts), so that a slow reader's
 * progress shows.
 */
function watchStalls(
  connections: Map<Socket, http.ServerResponse | undefined>,
  idleTimeoutMs: number,
): NodeJS.Timeout {
  const stalled = new WeakMap<Socket, { read: number; unsent: number; since: number }>();
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [socket, latest] of connections) {
      const unsent = socket.writableLength;
      if (!inFlight(latest) || (latest.req.complete && unsent === 0)) {
        stalled.delete(socket);
        continue;
      }
      const read = socket.bytesRead;
      const last = stalled.get(socket);
      if (last?.read !== read || last.unsent !== unsent)
        stalled.set(socket, { read, unsent, since: now });
      else if (now - last.since >= idleTimeoutMs) socket.destroy();
    }
  }, 1_000);
  timer.unref();
  return timer;
}
