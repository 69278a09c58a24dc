import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM } from '../../harness/browser.js';
import { send } from '../../harness/http.js';
import { startService, type StartedService } from '../../harness/service.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { auth, type AuthDeps } from '../../server/services.js';
import { ADMIN } from '../support/authClient.js';
import { browserAvailable } from '../support/browser.js';

const RUNS_AT_MOST = 3;
const MINIMUM_SCORE: Record<string, number> = {
  // Lighthouse's "good" band. The score weighs blocking time simulated from this host's CPU,
  // which on a busy 2-core machine swings by ten points; paint and bytes are held exactly below.
  performance: 90,
  accessibility: 100,
  'best-practices': 100,
  seo: 100,
};

type PageAudit = Awaited<ReturnType<typeof auditPage>>;
type ResourceSummary = { items?: { resourceType: string; transferSize: number }[] } | undefined;

/** One Lighthouse run of a page with its default mobile settings (slow 4G, CPU slowed 4×). */
async function auditPage(port: number, origin: string, path: string, cookie?: string) {
  // The account pages ask not to be indexed, which the SEO category counts against them.
  const categories = Object.keys(MINIMUM_SCORE).filter((id) => id !== 'seo' || !cookie);
  const result = await lighthouse(origin + path, {
    port,
    output: 'json',
    logLevel: 'error',
    onlyCategories: categories,
    extraHeaders: cookie ? { cookie } : {},
  });
  if (!result) throw new Error(`Lighthouse returned nothing for ${path}`);
  const { lhr } = result;
  const summary = (lhr.audits['resource-summary']?.details as ResourceSummary)?.items ?? [];
  return {
    path,
    finalPath: new URL(lhr.finalDisplayedUrl).pathname,
    runtimeError: lhr.runtimeError?.message,
    scores: Object.fromEntries(
      categories.map((id) => [id, Math.round((lhr.categories[id]?.score ?? 0) * 100)]),
    ),
    firstContentfulPaintMs: lhr.audits['first-contentful-paint']?.numericValue ?? Infinity,
    /** Compressed, headers included, as Lighthouse's resource summary counts them. */
    scriptBytes: summary.find((item) => item.resourceType === 'script')?.transferSize ?? Infinity,
    /** Audits that count towards a category and did not fully pass, with their score. */
    failedAudits: Object.values(lhr.categories).flatMap((category) =>
      category.auditRefs
        .filter((ref) => ref.weight > 0 && (lhr.audits[ref.id]?.score ?? 1) < 1)
        .map((ref) => `${ref.id} (${lhr.audits[ref.id]!.score})`),
    ),
  };
}

/** The targets missed by the best of each figure over the runs that completed. */
function missedTargets(runs: PageAudit[]): string[] {
  const completed = runs.filter((run) => !run.runtimeError);
  if (completed.length === 0) return [`Lighthouse failed: ${runs.at(-1)!.runtimeError}`];
  const best = <T>(pick: (run: PageAudit) => T, choose: (...values: T[]) => T) =>
    choose(...completed.map(pick));
  const missed = Object.entries(MINIMUM_SCORE).flatMap(([id, minimum]) => {
    if (!(id in completed[0]!.scores)) return [];
    const score = best((run) => run.scores[id]!, Math.max);
    return score < minimum ? [`${id} ${score} < ${minimum}`] : [];
  });
  if (completed[0]!.finalPath !== completed[0]!.path)
    missed.push(`ended on ${completed[0]!.finalPath}`);
  const paint = best((run) => run.firstContentfulPaintMs, Math.min);
  if (!(paint <= 850)) missed.push(`first contentful paint ${Math.round(paint)} ms > 850 ms`);
  const scriptBytes = best((run) => run.scriptBytes, Math.max);
  if (!(scriptBytes <= 90_000)) missed.push(`JavaScript ${scriptBytes} B > 90 kB`);
  return missed;
}

describe.skipIf(!browserAvailable)('the login pages in Lighthouse, mobile', () => {
  let service: StartedService<AuthDeps>;
  let chrome: chromeLauncher.LaunchedChrome;

  beforeAll(async () => {
    await ensureSpaBuilt();
    const config = loadConfig({ NODE_ENV: 'test', PASSWORD_HASH_COST: '1024' }).auth;
    service = await startService(auth, { deps: { config, spa: await builtSpa() } });
    chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM,
      // Chromium's first page load pays for its own start-up; Lighthouse clears the page's cache.
      startingUrl: `${service.url}/login`,
      chromeFlags: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  });
  afterAll(async () => {
    chrome?.kill();
    await service?.close();
  });

  test.each([
    { path: '/login', signedIn: false },
    { path: '/dashboard', signedIn: true },
  ])(
    '$path scores its targets, paints within 0.85 s and sends at most 90 kB of JavaScript',
    async ({ path, signedIn }) => {
      let cookie: string | undefined;
      if (signedIn) {
        const reply = await send(service.url, { method: 'POST', path: '/api/login', json: ADMIN });
        expect(reply.status, reply.text).toBe(200);
        cookie = reply.headers['set-cookie']?.find((line) => line.startsWith('token='));
        cookie = cookie?.split(';')[0];
      }
      const runs: PageAudit[] = [];
      // Noise on a busy machine only ever lowers a score or delays a paint: the best figures count.
      do runs.push(await auditPage(chrome.port, service.url, path, cookie));
      while (missedTargets(runs).length > 0 && runs.length < RUNS_AT_MOST);
      const described = runs.map(
        ({ scores, firstContentfulPaintMs, scriptBytes, failedAudits, runtimeError }) =>
          JSON.stringify({ ...scores, fcpMs: Math.round(firstContentfulPaintMs), scriptBytes }) +
          ` not passed: ${runtimeError ?? failedAudits.join(', ')}`,
      );
      expect(missedTargets(runs), `runs: ${described.join('; ')}`).toEqual([]);
    },
    RUNS_AT_MOST * 60_000,
  );
});
