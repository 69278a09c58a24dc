import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { auth, type AuthDeps } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { percentile } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { startTestService } from '../support/services.js';
import { expectChecks } from '../support/checks.js';
import { advanceClock } from '../support/clock.js';

// Does the login answer reveal whether an email exists? Its words must not, and its time must
// not by much: an unknown email is checked against a decoy hash at the same cost. The bound is
// loose, for a busy machine; without the decoy the unknown email answers many times faster.

const TRIES = 10;
const MEDIANS_RATIO_LIMIT = 2;

describe('login timing', () => {
  let service: StartedService<AuthDeps>;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  beforeAll(async () => {
    await ensureSpaBuilt();
    // The default scrypt cost, as in production.
    service = await startTestService(auth, {
      deps: { config: loadConfig({}).auth, spa: await builtSpa() },
      logLevel: 'warn',
    });
  }, 180_000);
  afterAll(async () => {
    agent.destroy();
    await service?.close();
  });

  test(`unknown email vs wrong password, ${TRIES} tries each`, async () => {
    const times = { unknown: [] as number[], wrong: [] as number[] };
    const answers = new Set<string>();
    const attempt = async (kind: 'unknown' | 'wrong', i: number) => {
      // Past the throttling window each time: this measures the password check, not the 429.
      advanceClock(16 * 60);
      const email = kind === 'unknown' ? `nobody-${i}@example.com` : 'user@example.com';
      const response = await service.request('POST', '/api/login', {
        json: { email, password: `wrong-${i}` },
        agent,
      });
      times[kind].push(response.ms);
      answers.add(`${response.status} ${response.text}`);
    };
    await attempt('unknown', -1); // warm-up, not counted
    times.unknown.length = 0;
    // Alternating, so that drift in the machine's speed touches both series alike.
    for (let i = 0; i < TRIES; i++)
      for (const kind of i % 2 === 0
        ? (['unknown', 'wrong'] as const)
        : (['wrong', 'unknown'] as const))
        await attempt(kind, i);

    const [unknown, wrong] = [percentile(times.unknown, 50), percentile(times.wrong, 50)];
    expectChecks({
      'both answer the same 401 body': answers.size === 1 && [...answers][0]!.startsWith('401 '),
      [`their median times are within ${MEDIANS_RATIO_LIMIT}× of each other`]:
        Math.max(unknown, wrong) < MEDIANS_RATIO_LIMIT * Math.min(unknown, wrong),
    });
  }, 300_000);
});
