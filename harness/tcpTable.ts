import fs from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** /proc/net/tcp's state of an established connection. */
const ESTABLISHED = '01';

/** The server's side of one connection, as the kernel holds it. */
export interface ServerSide {
  state: string;
  /** Bytes the server has written that the client has not acknowledged (the send queue). */
  unsent: number;
}

/** The server's side of each IPv4 connection to `port`, by client port, from /proc/net/tcp. */
export async function serverConnections(port: number): Promise<Map<number, ServerSide>> {
  const connections = new Map<number, ServerSide>();
  for (const line of (await fs.readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1)) {
    // sl, local address, remote address (`ADDRESS:PORT` in hex), state, tx_queue:rx_queue, …
    const [, local, remote, state, queues] = line.trim().split(/\s+/);
    if (!local || !remote || !state || !queues || parseInt(local.split(':')[1]!, 16) !== port)
      continue;
    const clientPort = parseInt(remote.split(':')[1]!, 16);
    // An old connection from the same client port (TIME_WAIT) must not hide a live one.
    if (connections.get(clientPort)?.state === ESTABLISHED) continue;
    connections.set(clientPort, { state, unsent: parseInt(queues.split(':')[0]!, 16) });
  }
  return connections;
}

/**
 * When the server last put bytes into a connection, and when it closed it (this machine's clock,
 * performance.now).
 */
export interface Watched {
  lastSentAt: number;
  closedAt?: number;
}

/**
 * Watches the server's side of the connection from `clientPort` to `port` until the server closes
 * it, or until `giveUpMs` have passed since the server last put bytes into it. A client that does
 * not read cannot see the end of a connection whose unsent bytes fill its window: the kernel's
 * table shows it, and the moment the server stopped sending, which is where an idle timeout
 * starts counting.
 */
export async function watchUntilClosed(
  port: number,
  clientPort: number,
  giveUpMs: number,
): Promise<Watched> {
  const watched: Watched = { lastSentAt: performance.now() };
  let unsent = -1;
  for (;;) {
    const side = (await serverConnections(port)).get(clientPort);
    const now = performance.now();
    if (!side || side.state !== ESTABLISHED) return { ...watched, closedAt: now };
    if (side.unsent !== unsent) [unsent, watched.lastSentAt] = [side.unsent, now];
    if (now - watched.lastSentAt > giveUpMs) return watched;
    await sleep(50);
  }
}
