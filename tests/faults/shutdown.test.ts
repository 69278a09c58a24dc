import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, onTestFinished, test } from 'vitest';
import { startEmbeddedPostgres } from '../../server/db/embeddedPostgres.js';
import { createLogger } from '../../server/logger.js';
import { send } from '../../harness/http.js';
import { withClient } from '../../harness/postgres.js';
import { startProcess } from '../../harness/processes.js';
import { postgresProcessesFor } from '../../harness/procfs.js';
import { NOTES_SERVICES, TEXT_FIELD, type NotesService } from '../support/hostileLoad.js';
import { useTemporaryDataDir } from '../support/services.js';
import { expectChecks } from '../support/checks.js';

// SIGTERM while requests flow. What was accepted completes and is kept; new connections are
// refused; the process and its embedded PostgreSQL end within 10 s.

const EXIT_WITHIN_MS = 10_000;
const CLIENTS_PER_SERVICE = 10;

const noteBody = (service: NotesService, title: string) => ({
  title,
  [TEXT_FIELD[service]]: 'x',
});

/**
 * A create whose headers and first bytes of the body are sent now, the rest when `finish()` is
 * called: a request the server has accepted and is still reading when the signal comes. Resolves
 * with the answer's status, or the connection error's code.
 */
function halfSentCreate(baseUrl: string, service: NotesService, title: string) {
  const body = Buffer.from(JSON.stringify(noteBody(service, title)));
  const { hostname, port } = new URL(baseUrl);
  const request = http.request({
    host: hostname,
    port,
    method: 'POST',
    path: '/notes',
    agent: false,
    headers: {
      'content-type': 'application/json',
      'content-length': body.length,
    },
  });
  const answer = new Promise<number | string>((resolve) => {
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
  request.write(body.subarray(0, 10));
  return { title, answer, finish: () => request.end(body.subarray(10)) };
}

/** Whether a new TCP connection to the address is refused. */
function connectionRefused(baseUrl: string): Promise<boolean> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('shutdown under load', () => {
  const dataDir = useTemporaryDataDir();

  test(
    'SIGTERM during load: accepted requests complete, ' +
      'new connections are refused, exit 0, nothing left',
    async () => {
      const services = await startProcess({
        dataDir: dataDir(),
        env: { DATABASE_URL: '' },
      });
      onTestFinished(async () => void (await services.stop()));
      const { urls } = services;
      /** Each create sent: its title, and its status or the connection error's code. */
      const attempts: { title: string; outcome: number | string }[] = [];
      let exited = false;
      void services.exited.then(() => (exited = true));

      const client = async (service: NotesService, worker: number) => {
        const agent = new http.Agent({ keepAlive: true });
        for (let i = 0; !exited; i++) {
          const title = `${service}-${worker}-${i}`;
          const json = noteBody(service, title);
          const outcome = await send(urls[service], {
            method: 'POST',
            path: '/notes',
            json,
            agent,
            timeoutMs: 15_000,
          }).then(
            (response) => response.status,
            (error: NodeJS.ErrnoException) => error.code ?? String(error),
          );
          attempts.push({ title, outcome });
          if (typeof outcome === 'string') await sleep(50);
        }
        agent.destroy();
      };
      const clients = NOTES_SERVICES.flatMap((service) =>
        Array.from({ length: CLIENTS_PER_SERVICE }, (_, worker) => client(service, worker)),
      );

      await sleep(1_500);
      const inFlight = NOTES_SERVICES.map((service) =>
        halfSentCreate(urls[service], service, `${service}-in-flight`),
      );
      await sleep(200);
      const signalledAt = performance.now();
      // SIGTERM now; SIGKILL only well past the promised 10 s, which the exit code then shows.
      const stopped = services.stop(EXIT_WITHIN_MS + 5_000);

      // New connections: refused while the half-sent requests are still open.
      let refusedWhileRunning = false;
      while (performance.now() - signalledAt < 2_000) {
        const refused = await Promise.all(NOTES_SERVICES.map((s) => connectionRefused(urls[s])));
        if (refused.every(Boolean)) {
          refusedWhileRunning = !exited;
          break;
        }
        await sleep(20);
      }
      await sleep(300);
      inFlight.forEach((request) => request.finish());
      const inFlightAnswers = await Promise.all(inFlight.map((request) => request.answer));

      const code = await stopped;
      const exitMs = performance.now() - signalledAt;
      await Promise.all(clients);
      const leftover = await postgresProcessesFor(dataDir());

      // What the database kept, read with the process gone.
      const database = await startEmbeddedPostgres({
        dataDir: dataDir(),
        logger: createLogger('warn'),
      });
      const { rows } = await withClient(database.url, (client) =>
        client.query<{ title: string }>(
          'SELECT title FROM notes8080.notes UNION ALL SELECT title FROM notes8000.notes',
        ),
      ).finally(() => database.stop());
      const stored = new Set(rows.map((row) => row.title));

      const otherStatuses = attempts.filter(
        ({ outcome }) => typeof outcome === 'number' && outcome !== 201,
      );
      const lostWrites = [...attempts.filter(({ outcome }) => outcome === 201), ...inFlight].filter(
        ({ title }) => !stored.has(title),
      );
      const lostAnswers = attempts.filter(
        ({ title, outcome }) => typeof outcome === 'string' && stored.has(title),
      );
      const checks = {
        'every answer was 201 (nothing failed while stopping)': otherStatuses.length === 0,
        'requests in flight at SIGTERM completed with 201': inFlightAnswers.every((a) => a === 201),
        'new connections refused while those were still open': refusedWhileRunning,
        'exit code 0 within 10 s': code === 0 && exitMs <= EXIT_WITHIN_MS,
        'no PostgreSQL process left': leftover.length === 0,
        'every 201 is in the table': lostWrites.length === 0,
        'no note stored whose request got no answer': lostAnswers.length === 0,
      };
      if (Object.values(checks).includes(false))
        console.error({
          otherStatuses: otherStatuses.slice(0, 5),
          lostWrites: lostWrites.slice(0, 5).map(({ title }) => title),
          lostAnswers: lostAnswers.slice(0, 5),
          inFlightAnswers,
          output: services
            .output()
            .split('\n')
            .filter((line) => !line.includes('"status":201'))
            .join('\n'),
        });
      expectChecks(checks);
    },
    240_000,
  );
});
