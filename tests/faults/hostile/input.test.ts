import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { send, type Reply } from '../../../harness/http.js';
import { expectChecks } from '../../support/checks.js';
import { advanceClock } from '../../support/clock.js';
import { catalogue, hostileRequest, type HostileRequest, type Service } from './requests.js';
import { distinct, polluted, problemWith, useHostileTargets, type Problem } from './targets.js';

// Catalogued and generated hostile requests against every endpoint of the three services, then
// JSON keys that would reach an object's prototype. Every answer must be below 500, and every 4xx
// in the service's own error shape.

const RUNS_PER_SERVICE = 150;
/** Node's HTTP parser refuses header blocks over this size before any app code runs. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;

const headerBytes = (request: HostileRequest) =>
  Object.entries(request.headers).reduce(
    (sum, [name, value]) => sum + name.length + String(value).length + 4,
    0,
  );
const tokenOf = (reply: Reply) => /token=([^;]+)/.exec(String(reply.headers['set-cookie']))?.[1];

describe('hostile input', () => {
  const started = useHostileTargets();
  /** Session tokens sent in cookies: none may ever appear in a log line. */
  const planted = new Set<string>();

  async function validToken(): Promise<string> {
    // Past the throttling window, so that this login is not refused.
    advanceClock(16 * 60);
    const login = await started('auth').request('POST', '/api/login', {
      json: { email: 'user@example.com', password: 'user-password' },
    });
    return tokenOf(login) ?? 'no-token';
  }

  for (const service of ['notes8080', 'notes8000', 'auth'] as const) {
    test(
      `${service}: catalogued and ${RUNS_PER_SERVICE} generated ` +
        `hostile requests, never a 5xx, always the error shape`,
      async () => {
        const problems: Problem[] = [];
        let requests = 0;
        /** The answer, or undefined when Node's parser closed the socket on oversized headers. */
        async function sendHostile(request: HostileRequest): Promise<Reply | undefined> {
          const headers = { ...request.headers };
          if (request.withValidSession) {
            const token = service === 'auth' ? await validToken() : crypto.randomUUID();
            planted.add(token);
            headers.cookie = String(headers.cookie).replace('VALID', token);
          }
          if (service === 'auth' && requests++ % 20 === 0) advanceClock(16 * 60);
          try {
            return await send(started(service).url, { ...request, headers, timeoutMs: 10_000 });
          } catch (error) {
            // It may close it before the client has written them all.
            const code = (error as NodeJS.ErrnoException).code;
            if (headerBytes(request) > NODE_MAX_HEADER_BYTES && /^(ECONNRESET|EPIPE)$/.test(code!))
              return undefined;
            throw error;
          }
        }
        // Every generated request runs (no stop at the first failure), so that the report lists
        // every kind of problem.
        const property = fc.asyncProperty(hostileRequest(service), async (request) => {
          const response = await sendHostile(request);
          const problem = response && problemWith(service, request, response);
          if (problem)
            problems.push({
              kind:
                `${request.method} ` +
                `${request.path.replace(/[0-9]+/g, 'N').slice(0, 40)} ${response.status}`,
              text:
                `${request.method} ${request.path.slice(0, 80)} ` +
                `${JSON.stringify(request.headers).slice(0, 160)} ` +
                `body ${JSON.stringify(request.body?.subarray(0, 80).toString('utf8') ?? null)} ` +
                `→ ${problem}`,
            });
          if (polluted())
            problems.push({
              kind: 'pollution',
              text: `${request.method} ${request.path} polluted`,
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
        if (problems.length || result.failed)
          console.error(
            `${service} problems:\n${distinct(problems).slice(0, 10).join('\n')}\n` +
              JSON.stringify(started(service).logs.errors().slice(-3)),
            result.errorInstance,
          );
        expectChecks({
          'no 5xx and every 4xx in the error shape': !result.failed && problems.length === 0,
          'no session token sent in a cookie appears in the log': ![...planted].some((token) =>
            logged.includes(token),
          ),
          'no prototype polluted': !polluted(),
          'still answering afterwards': alive.status === (service === 'auth' ? 401 : 200),
        });
      },
      600_000,
    );
  }

  test(
    '__proto__ and constructor keys change nothing: ' +
      'no pollution, no extra fields, no role change',
    async () => {
      const fields =
        '"title":"p","body":"b","content":"c",' +
        '"email":"user@example.com","password":"user-password"';
      const pollute = '{"polluted":"yes","role":"admin"}';
      // Sent as written: JSON.stringify cannot write a "__proto__" key.
      const payloads = [
        ['__proto__', `{"__proto__":${pollute},${fields}}`],
        ['constructor.prototype', `{"constructor":{"prototype":${pollute}},${fields}}`],
        ['__proto__: null', `{${fields},"__proto__":null}`],
      ];
      const noteKeys = {
        notes8080: ['body', 'created_at', 'id', 'title'],
        notes8000: ['content', 'created_at', 'id', 'title', 'updated_at'],
      };
      const headers = { 'content-type': 'application/json' };
      /**
       * Either the request is served as if the key were absent, or it is refused saying why: the
       * JSON itself is valid.
       */
      const wrongAnswers: string[] = [];
      const refused = (service: Service, label: string, response: Reply) => {
        if (
          response.status < 400 ||
          response.status >= 500 ||
          /json_invalid|Expecting value|not valid JSON/i.test(response.text) ||
          problemWith(service, { method: 'POST' }, response)
        )
          wrongAnswers.push(`${label} → ${response.status} ${response.text.slice(0, 160)}`);
      };
      for (const [label, body] of payloads) {
        for (const service of ['notes8080', 'notes8000'] as const) {
          const created = await started(service).request('POST', '/notes', { headers, body });
          if (created.status !== 201) {
            refused(service, `${service} create with ${label}`, created);
            continue;
          }
          const note = created.json as { id: number };
          const updated = await started(service).request('PUT', `/notes/${note.id}`, {
            headers,
            body,
          });
          expect(Object.keys(note).sort()).toEqual(noteKeys[service]);
          expect(updated.status).toBe(200);
          expect(Object.keys(updated.json as object).sort()).toEqual(noteKeys[service]);
        }
        advanceClock(16 * 60);
        const login = await started('auth').request('POST', '/api/login', { headers, body });
        if (login.status !== 200) {
          refused('auth', `login with ${label}`, login);
          continue;
        }
        const me = await started('auth').request('GET', '/api/me', {
          headers: { cookie: `token=${tokenOf(login)}` },
        });
        expect(me.json).toEqual({ user: { id: '1', email: 'user@example.com', role: 'user' } });
      }
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        const headers = { cookie: `token=${name}` };
        const me = await started('auth').request('GET', '/api/me', { headers });
        const page = await send(started('auth').url, {
          method: 'GET',
          path: '/dashboard',
          headers,
        });
        // The API refuses the session, the page sends to the login page.
        expect({
          name,
          me: [me.status, me.json],
          page: [page.status, page.headers.location],
        }).toEqual({ name, me: [401, { error: 'invalid session' }], page: [302, '/login'] });
      }
      if (wrongAnswers.length)
        console.error(`answers to __proto__/constructor keys:\n${wrongAnswers.join('\n')}`);
      expectChecks({
        'Object.prototype unchanged, ({}).polluted undefined': !polluted(),
        'served as if the key were absent, or refused saying why (not "malformed JSON")':
          wrongAnswers.length === 0,
      });
    },
    60_000,
  );
});
