import type { Summary } from './aggregate.js';
import { LARGE_LIST } from './notes.js';
import type { SpaReport, StartupTimes } from './results.js';
import { median } from './stats.js';

/** The targets, each checked against this run's numbers. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

export interface TargetInputs {
  summaries: Summary[];
  startup?: StartupTimes;
  spa?: SpaReport;
  rssAfterRunBytes?: number;
}

const MB = 1024 * 1024;
const ms = (value: number) => `${value.toFixed(1)} ms`;

export function checkTargets({ summaries, startup, spa, rssAfterRunBytes }: TargetInputs): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const find = (id: string) => summaries.find((summary) => summary.id === id);

  for (const id of ['auth GET /api/me', 'notes-8000 GET /health']) {
    const summary = find(id);
    if (summary?.ratio !== undefined) {
      const floor = summary.koaFloor ? ` (Koa alone: ${summary.koaFloor.ratio.toFixed(2)})` : '';
      checks.push({ target: `${id}: ≥ 0.75 of the HTTP limit`, measured: `${summary.ratio.toFixed(2)}${floor}`, met: summary.ratio >= 0.75 });
    }
  }
  for (const summary of summaries) {
    if (!summary.service.startsWith('notes-') || summary.limit?.kind !== 'composed' || summary.connections === 1) continue;
    const ratio = summary.ratio!;
    checks.push({
      target: `${summary.id}: ≥ 0.7 of the composed limit, no errors`,
      measured: `${ratio.toFixed(2)}, ${summary.errors} errors`,
      met: ratio >= 0.7 && summary.errors === 0,
    });
  }
  const underLogins = find('auth GET /api/me during logins');
  if (underLogins) {
    checks.push({ target: 'auth GET /api/me p99 during logins: < 20 ms', measured: ms(underLogins.p99), met: underLogins.p99 < 20 });
  }
  for (const summary of summaries.filter((s) => s.scenario.startsWith('GET /notes (') && s.connections === 1)) {
    checks.push({
      target: `${summary.service} GET /notes with ${LARGE_LIST.toLocaleString('en')} notes: < 150 ms a request (mean, 1 connection)`,
      measured: ms(summary.mean),
      met: summary.mean < 150 && summary.errors === 0,
    });
    checks.push({
      target: `${summary.service} GET /notes with ${LARGE_LIST.toLocaleString('en')} notes: RSS growth < 50 MB`,
      measured: `${(summary.rssGrowthBytes / MB).toFixed(1)} MB`,
      met: summary.rssGrowthBytes < 50 * MB,
    });
  }
  if (startup) {
    const warm = median(startup.warmMs);
    const cold = median(startup.coldMs);
    checks.push({ target: 'Warm start (npm start until all ports answer): < 3 s', measured: ms(warm), met: warm < 3000 });
    checks.push({ target: 'Cold start (empty data folder): < 20 s', measured: ms(cold), met: cold < 20_000 });
  }
  if (rssAfterRunBytes !== undefined) {
    checks.push({
      target: 'Service RSS after the run: < 150 MB (all three services share one process: its RSS)',
      measured: `${(rssAfterRunBytes / MB).toFixed(1)} MB`,
      met: rssAfterRunBytes < 150 * MB,
    });
  }
  if (spa && spa.files.length > 0) {
    checks.push({
      target: 'Pages: < 100 kB of gzipped JavaScript (both pages together)',
      measured: `${(spa.gzipBytes / 1000).toFixed(1)} kB`,
      met: spa.gzipBytes < 100_000,
    });
  }
  return checks;
}
