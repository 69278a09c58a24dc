import { LARGE_LIST } from './notes.js';
import type { SpaSize } from './pages.js';
import { median, type Summary } from './summary.js';

/** A target, checked against this run's numbers. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const MB = 1024 * 1024;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const largeList = LARGE_LIST.toLocaleString('en');

export function checkTargets(run: {
  summaries: Summary[];
  startup?: { coldMs: number[]; warmMs: number[] };
  spa?: SpaSize;
  rssAfterRunBytes?: number;
}): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const check = (target: string, measured: string, met: boolean) => checks.push({ target, measured, met });
  // Routes that only answer are held to Koa alone: no Koa route can go below it (bench/FINDINGS.md).
  for (const id of ['auth GET /api/me', 'notes-8000 GET /health']) {
    const summary = run.summaries.find((s) => s.id === id);
    if (summary?.limitKind === 'Koa') {
      check(`${id}: ≥ 0.8 of Koa alone`, `${summary.ratio.toFixed(2)} (of the HTTP limit: ${summary.httpRatio.toFixed(2)})`, summary.ratio >= 0.8);
    }
  }
  for (const s of run.summaries) {
    if (s.otherName !== 'database' || s.connections === 1) continue;
    check(`${s.id}: ≥ 0.7 of the composed limit, no errors`, `${s.ratio.toFixed(2)}, ${s.errors} errors`, s.ratio >= 0.7 && s.errors === 0);
  }
  const underLogins = run.summaries.find((s) => s.id.startsWith('auth GET /api/me during logins'));
  if (underLogins) check('auth GET /api/me p99 during logins: < 20 ms', ms(underLogins.p99), underLogins.p99 < 20);
  for (const s of run.summaries.filter((s) => s.scenario.startsWith('GET /notes (') && s.connections === 1)) {
    check(`${s.service} GET /notes with ${largeList} notes: < 150 ms a request (mean, 1 connection)`, ms(s.mean), s.mean < 150 && s.errors === 0);
    check(`${s.service} GET /notes with ${largeList} notes: RSS growth < 50 MB`, `${(s.rssGrowthBytes / MB).toFixed(1)} MB`, s.rssGrowthBytes < 50 * MB);
  }
  if (run.startup) {
    const warm = median(run.startup.warmMs);
    const cold = median(run.startup.coldMs);
    check('Warm start (npm start until all ports answer): < 3 s', ms(warm), warm < 3000);
    check('Cold start (empty data folder): < 20 s', ms(cold), cold < 20_000);
  }
  if (run.rssAfterRunBytes !== undefined) {
    const rss = run.rssAfterRunBytes;
    check('Service RSS after the run: < 150 MB (all three services share one process: its RSS)', `${(rss / MB).toFixed(1)} MB`, rss < 150 * MB);
  }
  if (run.spa && run.spa.files.length > 0) {
    check('Pages: < 100 kB of gzipped JavaScript (both pages together)', `${(run.spa.gzipBytes / 1000).toFixed(1)} kB`, run.spa.gzipBytes < 100_000);
  }
  return checks;
}
