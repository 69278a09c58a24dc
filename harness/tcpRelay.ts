import net from 'node:net';
import { listenOnFreePort } from './http.js';

/**
 * A TCP relay in front of a server (a database, say), on a loopback port of its own, that can be
 * cut the way a network or a server outage cuts connections: `cut()` drops every connection and
 * resets each new one at once until `restore()`; or frozen the way a server that stops answering
 * (or a network that drops every packet) freezes them: `freeze()` keeps every connection, and
 * takes new ones, but moves no byte either way until `restore()`. It holds its port all along, so
 * nothing else can take it in between.
 */
export interface TcpRelay {
  port: number;
  /** `url` (a `scheme://user@host:port/…` URL of the target) pointed at the relay instead. */
  through(url: string): string;
  cut(): void;
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<net.Socket>();
  let open = true;
  let frozen = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    if (!open) return void client.resetAndDestroy();
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    if (frozen) [client, upstream].forEach((socket) => socket.pause());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const port = await listenOnFreePort(server, '127.0.0.1');
  return {
    port,
    through(url) {
      const relayed = new URL(url);
      relayed.host = `127.0.0.1:${port}`;
      return relayed.toString();
    },
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    restore() {
      open = true;
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
