import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type Koa from 'koa';
import { listenVariables, type Config, type Listen } from '../config.js';
import { StartupError } from './errors.js';

/** Descriptors kept for everything but client connections: pools, files, PostgreSQL's pipes. */
const RESERVED_DESCRIPTORS = 1_024;

/** What one service lets its clients hold (MAX_CONNECTIONS, CLIENT_IDLE_TIMEOUT_MS, …). */
export interface ConnectionLimits {
  maxConnections: number;
  idleTimeoutMs: number;
  headersTimeoutMs: number;
}

const DEFAULT_LIMITS: ConnectionLimits = {
  maxConnections: 10_000,
  idleTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
};

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another instance, or another program)',
  EACCES: 'not allowed to use this port (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'no network interface of this machine has this address',
};

// Each open connection, oldest first, with its latest answer once it has had a request: Node
// answers a connection's requests in order, so only the latest can be in flight.
type Connections = Map<Socket, http.ServerResponse | undefined>;

const inFlight = (res: http.ServerResponse | undefined): res is http.ServerResponse =>
  res !== undefined && !res.writableFinished;

/**
 * Serves `app` with what a client may hold bounded; a request adds no listener and no timer.
 * `close` stops accepting, lets requests in flight finish (up to `graceMs`), then closes the rest.
 */
export function listen(app: Koa, { host, port }: Listen, limits = DEFAULT_LIMITS) {
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(30_000, limits.headersTimeoutMs),
      keepAliveTimeout: 5_000,
      // Checked every second rather than every 30 s, so the timeouts above fire on time.
      connectionsCheckingInterval: 1_000,
    },
    app.callback(),
  );
  // Node's socket timeout moves a timer at every read and write: `watchStalls` does its job.
  server.timeout = 0;
  const connections: Connections = new Map();
  const stalls = watchStalls(connections, limits.idleTimeoutMs);
  server.on('connection', (socket: Socket) => {
    connections.set(socket, undefined);
    socket.once('close', () => connections.delete(socket));
    if (connections.size > limits.maxConnections) closeOldestIdle(connections, socket);
  });
  // Once closing, each answer ends its connection: close() ends when the last answer is out.
  let closing = false;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) res.setHeader('Connection', 'close');
    connections.set(req.socket, res);
  });
  const close = (graceMs = 8_000) =>
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
    });
  return new Promise<{ url: string; close: typeof close }>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const bound = (server.address() as AddressInfo).port;
      const shown =
        host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
      resolve({ url: `http://${shown}:${bound}`, close });
    });
  });
}

/** Closes the oldest connection with no request in flight, or else the newcomer. */
function closeOldestIdle(connections: Connections, newcomer: Socket): void {
  for (const [socket, latest] of connections) {
    if (!inFlight(latest) && socket !== newcomer) return void socket.destroy();
  }
  newcomer.destroy();
}

/** Binds every service's address, or none: the start fails with a line per address that failed. */
export async function listenAll(
  services: { name: string; app: Koa; address: Listen }[],
  limits: ConnectionLimits,
) {
  const results = await Promise.allSettled(
    services.map(({ app, address }) => listen(app, address, limits)),
  );
  const servers = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
  const failures = results.flatMap((result, index) => {
    if (result.status === 'fulfilled') return [];
    const { name, address } = services[index]!;
    const { host, port } = listenVariables(name);
    const { code, message } = result.reason as NodeJS.ErrnoException;
    const reason = LISTEN_FAILURES[code ?? ''] ?? message;
    return `${name} cannot listen on ${address.host}:${address.port} (${host}, ${port}): ${reason}`;
  });
  if (failures.length === 0) return servers;
  await Promise.all(servers.map((server) => server.close(0)));
  throw new StartupError(failures.join('\n'));
}

/** What each server lets its clients hold: together, the services stay under the files limit. */
export function connectionLimits({ services, connections }: Config): ConnectionLimits {
  const limit = fileLimit() ?? 10_000 * services.length + RESERVED_DESCRIPTORS;
  const fits = Math.floor((limit - RESERVED_DESCRIPTORS) / services.length);
  const { max, idleTimeoutMs, headersTimeoutMs } = connections;
  if (max !== undefined && max > fits) {
    throw new StartupError(
      `MAX_CONNECTIONS=${max} is too many: ` +
        `${services.length} services × ${max} connections and ${RESERVED_DESCRIPTORS} other ` +
        `files do not fit in the open-files limit (${limit}); set it to at most ${fits}`,
    );
  }
  return { maxConnections: max ?? fits, idleTimeoutMs, headersTimeoutMs };
}

/** This process's limit on open files (Node raised it to the hard one), or undefined. */
function fileLimit(): number | undefined {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
    return soft === undefined ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}

/**
 * Closes a connection whose request waits on its client (a body that stopped coming, an answer not
 * read) when its bytes read and unsent have not moved for `idleTimeoutMs`. Node's socket timeout
 * forgives a socket whose write queue changed, and so cuts a client that stopped reading late.
 */
function watchStalls(connections: Connections, idleTimeoutMs: number): NodeJS.Timeout {
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
