import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { auth } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { notes8000 } from '../../server/services.js';
import { notes8080 } from '../../server/services.js';
import { loadConfig } from '../../server/config.js';
import { send, type Reply } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { startTestService } from '../support/services.js';
import { catalogue, hostileRequest, type HostileRequest, type Service } from './hostileRequests.js';
import { expectChecks } from '../support/checks.js';
import { advanceClock } from '../support/clock.js';

// Generated hostile requests against every endpoint of the three services, each on its own
// port as the process serves it. Every answer must be below 500, and every 4xx must be in the
// service's own error shape.

const RUNS_PER_SERVICE = 150;
/** Node's HTTP parser refuses header blocks over this size before any app code runs. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;

const prototypeNames = () => ({
  object: Object.getOwnPropertyNames(Object.prototype).sort(),
  array: Object.getOwnPropertyNames(Array.prototype).sort(),
  function: Object.getOwnPropertyNames(Function.prototype).sort(),
});
const pristine = prototypeNames();
const polluted = () =>
  (({}) as Record<string, unknown>).polluted !== undefined ||
  ({} as Record<string, unknown>).role !== undefined ||
  JSON.stringify(prototypeNames()) !== JSON.stringify(pristine);

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

interface Problem {
  /**
   * Method, path with its digits blanked, and the answer's status: one example of each is reported.
   */
  kind: string;
  text: string;
}

function distinct(problems: Problem[]): string[] {
  return [...new Map(problems.map((problem) => [problem.kind, problem.text])).values()];
}

/**
 * Why an answer breaks the rules, or undefined when it keeps them. Pages and files of the login
 * service are held to the same rule: what no route takes is answered in the API's shape too.
 */
function problemWith(
  service: Service,
  request: HostileRequest,
  response: Reply,
): string | undefined {
  if (response.status >= 500) return `answered ${response.status}: ${response.text.slice(0, 200)}`;
  if (response.status < 400 || request.method === 'HEAD') return undefined;
  // Answered by Node's HTTP parser (431 for an oversized header block), never by the app.
  if (response.status === 431 && response.body.length === 0) return undefined;
  const contentType = String(response.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/json'))
    return `${response.status} with content type "${contentType}"`;
  const body = response.json as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return `${response.status} body is not an object`;
  const keys = Object.keys(body);
  if (service === 'notes8000') {
    const { detail } = body;
    const entriesOk =
      Array.isArray(detail) &&
      detail.every(
        (entry: Record<string, unknown>) =>
          typeof entry?.type === 'string' &&
          Array.isArray(entry.loc) &&
          typeof entry.msg === 'string',
      );
    if (keys.length !== 1 || (typeof detail !== 'string' && !entriesOk))
      return `${response.status} not {detail}: ${JSON.stringify(body).slice(0, 200)}`;
  } else if (keys.length !== 1 || typeof body.error !== 'string' || body.error === '') {
    return `${response.status} not {error}: ${JSON.stringify(body).slice(0, 200)}`;
  }
  return undefined;
}

/** What this file asks of a started service, whatever its dependencies. */
type Started = Omit<StartedService<unknown>, 'db'>;

describe('hostile input', () => {
  const services: Partial<Record<Service, Started>> = {};
  const tallies: Record<Service, Tally> = {
    notes8080: newTally(),
    notes8000: newTally(),
    auth: newTally(),
  };
  const started = (service: Service) => services[service]!;

  beforeAll(async () => {
    // Every line kept, a line per request included: the log is searched for the tokens planted.
    const options = {
      deps: { config: loadConfig({}).notes },
      pool: { poolMax: 10, timeoutMs: 5_000 },
      logLevel: 'info',
    };
    services.notes8080 = await startTestService(notes8080, options);
    services.notes8000 = await startTestService(notes8000, options);
    await ensureSpaBuilt();
    const { auth: config } = loadConfig({ PASSWORD_HASH_COST: '16' });
    services.auth = await startTestService(auth, {
      deps: { config, spa: await builtSpa() },
      logLevel: 'info',
    });
    // Some notes for the ids to find.
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await started('notes8080').request('POST', '/notes', {
            json: { title: `seed ${i}`, body: 'b' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await started('notes8000').request('POST', '/notes', {
            json: { title: `seed ${i}`, content: 'c' },
          })
        ).status,
      ).toBe(201);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(Object.values(services).map((service) => service.close()));
  });

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

  test(
    '__proto__ and constructor keys change nothing: ' +
      'no pollution, no extra fields, no role change',
    async () => {
      const payloads = [
        '{"__proto__":{"polluted":"yes","role":"admin"},"title":"p","body":"b",' +
          '"content":"c","email":"user@example.com","password":"user-password"}',
        '{"constructor":{"prototype":{"polluted":"yes","role":"admin"}},"title":"p",' +
          '"body":"b","content":"c","email":"user@example.com","password":"user-password"}',
        '{"title":"p","body":"b","content":"c","email":"user@example.com",' +
          '"password":"user-password","__proto__":null}',
      ];
      const noteKeys = {
        notes8080: ['body', 'created_at', 'id', 'title'],
        notes8000: ['content', 'created_at', 'id', 'title', 'updated_at'],
      };
      // Sent as written: JSON.stringify cannot write a "__proto__" key.
      const json = { 'content-type': 'application/json' };
      const seen: string[] = [];
      /**
       * Either the request is served as if the key were absent, or it is refused saying why:
       * the JSON itself is valid.
       */
      const wrongAnswers: string[] = [];
      const refusal = (service: Service, label: string, response: Reply) => {
        const text = response.text;
        seen.push(`${label} → ${response.status} ${text.slice(0, 120)}`);
        const claimsMalformed = /json_invalid|Expecting value|not valid JSON/i.test(text);
        if (
          response.status < 400 ||
          response.status >= 500 ||
          claimsMalformed ||
          problemWith(
            service,
            { method: 'POST', path: '/', headers: {}, withValidSession: false },
            response,
          )
        ) {
          wrongAnswers.push(`${label} → ${response.status} ${text.slice(0, 160)}`);
        }
      };
      for (const payload of payloads) {
        const label = payload.includes('"constructor"')
          ? 'constructor.prototype'
          : payload.includes('"__proto__":null')
            ? '__proto__: null'
            : '__proto__';
        for (const service of ['notes8080', 'notes8000'] as const) {
          const created = await started(service).request('POST', '/notes', {
            headers: json,
            body: payload,
          });
          if (created.status !== 201) {
            refusal(service, `${service} create with ${label}`, created);
            continue;
          }
          const note = created.json as Record<string, unknown>;
          const updated = await started(service).request('PUT', `/notes/${note.id}`, {
            headers: json,
            body: payload,
          });
          seen.push(`${service} create with ${label} → 201, update → ${updated.status}`);
          expect(Object.keys(note).sort()).toEqual(noteKeys[service]);
          expect(updated.status).toBe(200);
          expect(Object.keys(updated.json as object).sort()).toEqual(noteKeys[service]);
        }
        advanceClock(16 * 60);
        const login = await started('auth').request('POST', '/api/login', {
          headers: json,
          body: payload,
        });
        if (login.status !== 200) {
          refusal('auth', `login with ${label}`, login);
          continue;
        }
        const token = /token=([^;]+)/.exec(String(login.headers['set-cookie']))![1];
        const me = await started('auth').request('GET', '/api/me', {
          headers: { cookie: `token=${token}` },
        });
        seen.push(`login with ${label} → 200, /api/me → ${me.text}`);
        expect(me.json).toEqual({ user: { id: '1', email: 'user@example.com', role: 'user' } });
      }
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        const me = await started('auth').request('GET', '/api/me', {
          headers: { cookie: `token=${name}` },
        });
        expect({ name, status: me.status, body: me.json }).toEqual({
          name,
          status: 401,
          body: { error: 'invalid session' },
        });
        const dashboard = await send(started('auth').url, {
          method: 'GET',
          path: '/dashboard',
          headers: { cookie: `token=${name}` },
        });
        expect({ name, status: dashboard.status, location: dashboard.headers.location }).toEqual({
          name,
          status: 302,
          location: '/login',
        });
      }
      const checks = {
        'Object.prototype unchanged, ({}).polluted undefined': !polluted(),
        'served as if the key were absent, or refused saying why (not "malformed JSON")':
          wrongAnswers.length === 0,
      };
      if (wrongAnswers.length)
        console.error(`answers to __proto__/constructor keys:\n${wrongAnswers.join('\n')}`);
      expectChecks(checks);
    },
    60_000,
  );
});
