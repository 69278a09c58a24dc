import fc from 'fast-check';
import { describe, test } from 'vitest';
import { send, type Reply } from '../../../harness/http.js';
import { expectChecks } from '../../support/checks.js';
import { advanceClock } from '../../support/clock.js';
import { distinct, polluted, problemWith, type Problem } from './answers.js';
import { catalogue, hostileRequest, type HostileRequest, type Service } from './requests.js';
import { useHostileTargets } from './targets.js';

// Catalogued and generated hostile requests against every endpoint of the three services. Every
// answer must be below 500, and every 4xx must be in the service's own error shape.

const RUNS_PER_SERVICE = 150;
/** Node's HTTP parser refuses header blocks over this size before any app code runs. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;

interface Tally {
  requests: number;
  refusedByParser: number;
  problems: Problem[];
}

const newTally = (): Tally => ({
  requests: 0,
  refusedByParser: 0,
  problems: [],
});

const headerBytes = (request: HostileRequest) =>
  Object.entries(request.headers).reduce(
    (sum, [name, value]) => sum + name.length + String(value).length + 4,
    0,
  );

describe('hostile input', () => {
  const started = useHostileTargets();
  const tallies: Record<Service, Tally> = {
    notes8080: newTally(),
    notes8000: newTally(),
    auth: newTally(),
  };

  /** Session tokens sent in cookies: none may ever appear in a log line. */
  const planted = new Set<string>();

  async function validToken(): Promise<string> {
    // Move the login service's clock past the throttling window, so this login is not refused.
    advanceClock(16 * 60);
    const login = await started('auth').request('POST', '/api/login', {
      json: { email: 'user@example.com', password: 'user-password' },
    });
    const cookie = String(login.headers['set-cookie'] ?? '');
    return /token=([^;]+)/.exec(cookie)?.[1] ?? 'no-token';
  }

  async function sendHostile(
    service: Service,
    request: HostileRequest,
  ): Promise<Reply | undefined> {
    const tally = tallies[service];
    const headers = { ...request.headers };
    if (request.withValidSession) {
      const token = service === 'auth' ? await validToken() : crypto.randomUUID();
      planted.add(token);
      headers.cookie = String(headers.cookie).replace('VALID', token);
    }
    if (service === 'auth' && tally.requests % 20 === 0) advanceClock(16 * 60);
    tally.requests++;
    try {
      const response = await send(started(service).url, { ...request, headers, timeoutMs: 10_000 });
      return response;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // The parser closes the socket on an oversized header block, sometimes before the client has
      // written it all.
      if (
        headerBytes(request) > NODE_MAX_HEADER_BYTES &&
        (code === 'ECONNRESET' || code === 'EPIPE')
      ) {
        tally.refusedByParser++;
        return undefined;
      }
      throw error;
    }
  }
  for (const service of ['notes8080', 'notes8000', 'auth'] as const) {
    test(
      `${service}: catalogued and ${RUNS_PER_SERVICE} generated ` +
        `hostile requests, never a 5xx, always the error shape`,
      async () => {
        const tally = tallies[service];
        // Every generated request runs (no stop at the first failure), so the report lists
        // every kind of problem.
        const property = fc.asyncProperty(hostileRequest(service), async (request) => {
          const response = await sendHostile(service, request);
          const problem = response && problemWith(service, request, response);
          if (problem) {
            tally.problems.push({
              kind:
                `${request.method} ` +
                `${request.path.replace(/[0-9]+/g, 'N').slice(0, 40)} ${response.status}`,
              text:
                `${request.method} ${request.path.slice(0, 80)} ` +
                `${JSON.stringify(request.headers).slice(0, 160)} ` +
                `body ${JSON.stringify(request.body?.subarray(0, 80).toString('utf8') ?? null)} ` +
                `→ ${problem}`,
            });
          }
          if (polluted())
            tally.problems.push({
              kind: 'pollution',
              text: `${request.method} ${request.path} polluted a prototype`,
            });
        });
        const examples = catalogue(service).map((request): [HostileRequest] => [request]);
        // Examples count towards numRuns: the generated requests come on top.
        const result = await fc.check(property, {
          numRuns: RUNS_PER_SERVICE + examples.length,
          seed: 42,
          examples,
        });
        const alive = await started(service).request(
          'GET',
          service === 'auth' ? '/api/me' : '/notes',
        );

        const logged = JSON.stringify(started(service).logs.lines);
        const leaked = [...planted].filter((token) => logged.includes(token));
        const checks = {
          'no 5xx and every 4xx in the error shape': !result.failed && tally.problems.length === 0,
          'no session token sent in a cookie appears in the log': leaked.length === 0,
          'no prototype polluted': !polluted(),
          'still answering afterwards': alive.status === (service === 'auth' ? 401 : 200),
        };
        if (tally.problems.length || result.failed)
          console.error(
            `${service} problems:\n${distinct(tally.problems).slice(0, 10).join('\n')}\n` +
              JSON.stringify(started(service).logs.errors().slice(-3)),
            result.errorInstance,
          );
        expectChecks(checks);
      },
      600_000,
    );
  }
});
