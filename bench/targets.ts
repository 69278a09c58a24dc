import { POSTGRES_STORE } from './auth.js';
import { LARGE_LIST } from './notes.js';
import { PEER } from './peerProcess.js';
import type { LighthouseRun, PagesReport } from './pages.js';
import { median, type Summary } from './summary.js';

/** A target, checked against this run's numbers. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const MB = 1024 * 1024;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const perSecond = (value: number) => `${Math.round(value).toLocaleString('en')} req/s`;
const largeList = LARGE_LIST.toLocaleString('en');

export function checkTargets(run: {
  summaries: Summary[];
  startup?: { coldMs: number[]; warmMs: number[] };
  spa?: PagesReport;
  rssAfterRunBytes?: number;
}): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const check = (target: string, measured: string, met: boolean) =>
    checks.push({ target, measured, met });
  // Each scenario measured against the peer in the same rounds: the medians of both.
  for (const s of run.summaries) {
    if (!s.peer) continue;
    const { ratio, cpuRatio, requestsPerSecond, cpuUs } = s.peer;
    check(
      `${s.id}: req/s ≥ 0.85 × ${PEER}'s, no errors`,
      `${ratio.toFixed(2)} (${perSecond(s.requestsPerSecond)} ` +
        `against ${perSecond(requestsPerSecond)}), ${s.errors} errors`,
      ratio >= 0.85 && s.errors === 0,
    );
    check(
      `${s.id}: CPU µs per request ≤ 1.25 × ${PEER}'s`,
      `${cpuRatio.toFixed(2)} (${s.cpuUs.toFixed(0)} µs against ${cpuUs.toFixed(0)} µs)`,
      cpuRatio <= 1.25,
    );
  }
  // The comparisons: each side against the main instance's in the same round (bench/compare.ts).
  for (const s of run.summaries.filter((s) => s.comparison?.variant === POSTGRES_STORE)) {
    const measured =
      `${s.againstRatio.toFixed(2)} (${perSecond(s.requestsPerSecond)} ` +
      `against ${perSecond(s.againstRequestsPerSecond)})`;
    check(
      `${s.id}: ≥ 0.5 of the memory store's req/s in the same round`,
      measured,
      s.againstRatio >= 0.5,
    );
  }
  // An answer of 429 or 503 is a refusal, not a login.
  const logins = run.summaries.find((s) => s.id === 'auth POST /api/login');
  if (logins)
    check('auth POST /api/login: no errors', `${logins.errors} errors`, logins.errors === 0);
  const errors = (s: Summary) => `${s.errors} errors, ${s.alongsideErrors} in the logins`;
  const noErrors = (s: Summary) => s.errors === 0 && s.alongsideErrors === 0;
  const underLogins = run.summaries.find((s) => s.id.startsWith('auth GET /api/me during logins'));
  if (underLogins)
    check(
      'auth GET /api/me p99 during logins: < 20 ms, no errors in it or the logins',
      `${ms(underLogins.p99)}, ${errors(underLogins)}`,
      underLogins.p99 < 20 && noErrors(underLogins),
    );
  // Password checks must not starve the notes services of libuv's threads or of the event loop.
  for (const s of run.summaries.filter((s) =>
    s.scenario.startsWith('GET /notes/{id} during logins'),
  )) {
    check(
      `${s.service} ${s.scenario}: p99 < 250 ms, no errors in it or the logins`,
      `${ms(s.p99)} (p50 ${ms(s.p50)}), ${errors(s)}`,
      s.p99 < 250 && noErrors(s),
    );
  }
  for (const s of run.summaries.filter(
    (s) => s.scenario === `GET /notes (${largeList} notes)` && s.connections === 1,
  )) {
    check(
      `${s.service} GET /notes with ${largeList} notes: < 150 ms a request (mean, 1 connection)`,
      ms(s.mean),
      s.mean < 150 && s.errors === 0,
    );
    check(
      `${s.service} GET /notes with ${largeList} notes: RSS growth < 50 MB`,
      `${(s.rssGrowthBytes / MB).toFixed(1)} MB`,
      s.rssGrowthBytes < 50 * MB,
    );
  }
  if (run.startup) {
    const warm = median(run.startup.warmMs);
    const cold = median(run.startup.coldMs);
    check('Warm start (npm start until all ports answer): < 3 s', ms(warm), warm < 3000);
    check('Cold start (empty data folder): < 20 s', ms(cold), cold < 20_000);
  }
  if (run.rssAfterRunBytes !== undefined) {
    const rss = run.rssAfterRunBytes;
    check(
      'Service RSS after the ordinary scenarios, the largest of the ' +
        'rounds: < 150 MB (all three services share one process: its RSS)',
      `${(rss / MB).toFixed(1)} MB`,
      rss < 150 * MB,
    );
  }
  for (const weight of run.spa?.weights ?? []) {
    check(
      `Pages: ${weight.page} transfers ≤ 90 kB of JavaScript (compressed)`,
      `${(weight.scriptBytes / 1000).toFixed(1)} kB`,
      weight.scriptBytes <= 90_000,
    );
  }
  for (const page of ['/login', '/dashboard']) {
    const runs = run.spa?.lighthouse.filter((result) => result.page === page) ?? [];
    if (runs.length === 0) continue;
    const typical = medianRun(runs);
    const lighthouse = (target: string, measured: string, met: boolean) =>
      check(`Lighthouse ${page} (mobile, median of ${runs.length} runs): ${target}`, measured, met);
    lighthouse('performance ≥ 98', String(typical.performance), typical.performance >= 98);
    lighthouse('accessibility 100', String(typical.accessibility), typical.accessibility === 100);
    lighthouse('best practices 100', String(typical.bestPractices), typical.bestPractices === 100);
    // The account pages ask not to be indexed, which Lighthouse's SEO category counts against them.
    if (page === '/login') lighthouse('SEO 100', String(typical.seo), typical.seo === 100);
    lighthouse(
      'first contentful paint ≤ 0.85 s (simulated)',
      ms(typical.firstContentfulPaintMs),
      typical.firstContentfulPaintMs <= 850,
    );
    lighthouse(
      'JavaScript transferred ≤ 90 kB',
      `${(typical.scriptBytes / 1000).toFixed(1)} kB`,
      typical.scriptBytes <= 90_000,
    );
  }
  return checks;
}

/**
 * The run whose first contentful paint is the median of the runs' (Lighthouse varies from run to
 * run).
 */
export function medianRun(runs: LighthouseRun[]): LighthouseRun {
  const sorted = [...runs].sort((a, b) => a.firstContentfulPaintMs - b.firstContentfulPaintMs);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
