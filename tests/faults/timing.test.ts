import http from 'node:http';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { auth, type AuthDeps } from '../../server/services.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { percentile } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { startTestService } from '../support/services.js';
import { expectChecks, passed, report } from './report.js';
import { scale } from './scale.js';
import { advanceClock } from '../support/clock.js';

// Does the login answer reveal whether an email exists? Measured and reported; the only
// assertions are on what the answers say, never on their timing.

const TRIES = scale(10, 200);

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const variance = (values: number[]) => {
  const m = mean(values);
  return values.reduce((sum, value) => sum + (value - m) ** 2, 0) / (values.length - 1);
};

describe('login timing', () => {
  let service: StartedService<AuthDeps>;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    await ensureSpaBuilt();
    // The default scrypt cost, as in production.
    const { auth: config } = loadConfig({});
    service = await startTestService(auth, {
      deps: { config, spa: await builtSpa() },
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
    for (let i = 0; i < TRIES; i++) {
      // Alternating, so that drift in the machine's speed touches both series alike.
      if (i % 2 === 0) {
        await attempt('unknown', i);
        await attempt('wrong', i);
      } else {
        await attempt('wrong', i);
        await attempt('unknown', i);
      }
    }

    const medians = { unknown: percentile(times.unknown, 50), wrong: percentile(times.wrong, 50) };
    const difference = medians.unknown - medians.wrong;
    const welchT =
      (mean(times.unknown) - mean(times.wrong)) /
      Math.sqrt(variance(times.unknown) / TRIES + variance(times.wrong) / TRIES);
    const summary = (values: number[]) =>
      `median ${percentile(values, 50).toFixed(1)} ms, ` +
      `mean ${mean(values).toFixed(1)} ms, p10 ${percentile(values, 10).toFixed(1)} ` +
      `ms, p90 ${percentile(values, 90).toFixed(1)} ms`;

    const checks = {
      'both answer the same 401 body': answers.size === 1 && [...answers][0].startsWith('401 '),
    };
    report({
      key: '6',
      case: '6. Login timing: unknown email vs wrong password',
      done:
        `${TRIES} logins with an unknown email and ${TRIES} with a known ` +
        `email and a wrong password, alternating, over HTTP to the login app ` +
        `at the default scrypt cost (PASSWORD_HASH_COST=16384), one at a time.`,
      expected: 'Same answer, and the same time within noise (a report, not an assertion on time).',
      observed:
        `Unknown email: ${summary(times.unknown)}. Wrong password: ${summary(times.wrong)}. ` +
        `Difference of medians ${difference.toFixed(1)} ms ` +
        `(${((100 * difference) / medians.wrong).toFixed(1)}%), Welch t ` +
        `= ${welchT.toFixed(2)} (|t| < 2: no difference detectable). ` +
        `Answers: ${[...answers].join(' | ')}.`,
      pass: passed(checks),
    });
    expectChecks(checks);
  }, 300_000);
});
