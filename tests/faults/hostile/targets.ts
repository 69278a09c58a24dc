import { afterAll, beforeAll, expect } from 'vitest';
import type { Reply } from '../../../harness/http.js';
import type { StartedService } from '../../../harness/service.js';
import { builtSpa, ensureSpaBuilt } from '../../../server/auth/spa.js';
import { loadConfig } from '../../../server/config.js';
import { auth, notes8000, notes8080 } from '../../../server/services.js';
import { startTestService } from '../../support/services.js';
import type { HostileRequest, Service } from './requests.js';

// The three services the hostile requests are sent to, what every answer must keep to, and what
// no request may change.

/** What the hostile tests ask of a started service, whatever its dependencies. */
type Started = Omit<StartedService<unknown>, 'db'>;

/**
 * The three services, each on its own port as the process serves it, with a few notes for the
 * ids to find; every log line kept (a line per request included), to search for planted tokens.
 */
export function useHostileTargets(): (service: Service) => Started {
  const services: Partial<Record<Service, Started>> = {};
  beforeAll(async () => {
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
    for (let i = 0; i < 5; i++)
      for (const [service, text] of [
        ['notes8080', 'body'],
        ['notes8000', 'content'],
      ] as const) {
        const json = { title: `seed ${i}`, [text]: 'x' };
        expect((await services[service]!.request('POST', '/notes', { json })).status).toBe(201);
      }
  }, 180_000);
  afterAll(() => Promise.all(Object.values(services).map((service) => service.close())));
  return (service) => services[service]!;
}

const prototypeNames = () =>
  [Object.prototype, Array.prototype, Function.prototype].map((prototype) =>
    Object.getOwnPropertyNames(prototype).sort(),
  );
const pristine = JSON.stringify(prototypeNames());
export const polluted = () =>
  (({}) as Record<string, unknown>).polluted !== undefined ||
  ({} as Record<string, unknown>).role !== undefined ||
  JSON.stringify(prototypeNames()) !== pristine;

export interface Problem {
  /** Method, path with its digits blanked, and the status: one example of each is reported. */
  kind: string;
  text: string;
}

export const distinct = (problems: Problem[]) => [
  ...new Map(problems.map((problem) => [problem.kind, problem.text])).values(),
];

/**
 * Why an answer breaks the rules, or undefined when it keeps them. Pages and files of the login
 * service are held to the same rule: what no route takes is answered in the API's shape too.
 */
export function problemWith(
  service: Service,
  request: Pick<HostileRequest, 'method'>,
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
  const { detail, error } = body;
  const shaped =
    service !== 'notes8000'
      ? typeof error === 'string' && error !== ''
      : typeof detail === 'string' ||
        (Array.isArray(detail) &&
          detail.every(
            (entry: Record<string, unknown>) =>
              typeof entry?.type === 'string' &&
              Array.isArray(entry.loc) &&
              typeof entry.msg === 'string',
          ));
  if (Object.keys(body).length !== 1 || !shaped)
    return (
      `${response.status} not {${service === 'notes8000' ? 'detail' : 'error'}}: ` +
      JSON.stringify(body).slice(0, 200)
    );
  return undefined;
}
