import net from 'node:net';
import type { FloodMessage, FloodOrders, FloodReport } from './loginFlood.js';

// A login flood in a process of its own (see loginFlood.ts): its clients' work does not delay
// the test's own measurements. Orders come as JSON in the first argument; the process says over
// its IPC channel when every lane has had an answer, when an address meets its failure budget,
// and reports everything once told to stop.
//
// Each lane is one keep-alive connection written to and read from as bytes, as a flooding tool
// would: an HTTP client's own work per request would take as much of this machine's CPU as the
// service's, which an attacker's machine would not.

const { url, addresses, lanes } = JSON.parse(process.argv[2]!) as FloodOrders;
const { hostname, port, host } = new URL(url);
let stopped = false;
/** Lanes not answered yet: once none is left, every connection is up and the flood under way. */
let silentLanes = addresses.length * lanes;
const report: FloodReport = { sent: 0, outcomes: {}, checked: {} };
const spent = new Set<string>();
const tell = (message: FloodMessage) => process.send!(message);
const count = (outcome: string) => (report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1);

/** A wrong login for an email nobody has, a new one each time. */
function request(): { bytes: string; position: number } {
  const position = report.sent++;
  const body = JSON.stringify({ email: `flood-${position}@example.com`, password: 'wrong' });
  return {
    position,
    bytes:
      `POST /api/login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ` +
      `application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  };
}

/** The answers' status lines and the headers read here: the service always sends Content-Length. */
const header = (head: string, name: string) =>
  new RegExp(`\r\n${name}: *(\\d+)`, 'i').exec(head)?.[1];

function answered429(from: string, position: number, head: string) {
  report.firstRefusal = Math.min(report.firstRefusal ?? position, position);
  // The budget's refusal waits minutes; the refusal of a third attempt in progress, a second.
  if (Number(header(head, 'retry-after')) > 1 && !spent.has(from)) {
    spent.add(from);
    tell({ spent: from });
  }
}

/**
 * One connection from `from`, one wrong login in flight on it at a time, reconnecting when closed;
 * resolves once stopped.
 */
function lane(from: string): Promise<void> {
  return new Promise((done) => {
    let heard = false;
    const connect = () => {
      let received = Buffer.alloc(0);
      let inFlight = request();
      const socket = net.connect({ host: hostname, port: Number(port), localAddress: from }, () =>
        socket.write(inFlight.bytes),
      );
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        for (;;) {
          const end = received.indexOf('\r\n\r\n');
          if (end === -1) return;
          const head = received.toString('latin1', 0, end);
          const length = end + 4 + Number(header(head, 'content-length') ?? 0);
          if (received.length < length) return;
          received = received.subarray(length);
          const status = Number(head.slice(9, 12));
          if (!heard) {
            heard = true;
            if (--silentLanes === 0) tell({ started: true });
          }
          count(String(status));
          if (status === 401) report.checked[from] = (report.checked[from] ?? 0) + 1;
          if (status === 429) answered429(from, inFlight.position, head);
          if (stopped) return void socket.end();
          inFlight = request();
          socket.write(inFlight.bytes);
        }
      });
      socket.on('error', (error) => count(`error (${error.message.slice(0, 60)})`));
      socket.on('close', () => (stopped ? done() : connect()));
    };
    connect();
  });
}

const running = Promise.all(
  addresses.flatMap((from) => Array.from({ length: lanes }, () => lane(from))),
);
process.on('message', async () => {
  stopped = true;
  await running;
  process.send!({ report } satisfies FloodMessage, () => process.disconnect());
});
