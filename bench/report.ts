import os from 'node:os';
import type { PagesReport } from './pages.js';
import { PEER } from './peerProcess.js';
import { median, type Summary } from './summary.js';
import { medianRun, type TargetCheck } from './targets.js';

export interface Report {
  quick: boolean;
  date: string;
  postgres: string;
  /**
   * 1-minute load averages when the load rounds began and ended: other work on the machine skews
   * the numbers.
   */
  loadAverage: [before: number, after: number];
  method: string[];
  summaries: Summary[];
  targets: TargetCheck[];
  startup?: { coldMs: number[]; warmMs: number[] };
  spa?: PagesReport;
  /**
   * The services' RSS in each round: idle (after start-up and the pages, before the load), after
   * the ordinary scenarios, and after the hostile-load scenarios, which run last.
   */
  rss: { idle: number[]; afterRun: number[]; afterHostile: number[] };
  problems: string[];
  findings?: string;
}

interface Table {
  header: string[];
  rows: string[][];
}

const MB = 1024 * 1024;
const fixed = (value: number, digits = 1) => (Number.isNaN(value) ? '–' : value.toFixed(digits));
const count = (value: number) =>
  Number.isNaN(value) ? '–' : Math.round(value).toLocaleString('en');
const megabytes = (bytes: number | undefined) => (!bytes ? '–' : (bytes / MB).toFixed(1));
const kilobytes = (bytes: number) => (bytes / 1000).toFixed(1);

function scenarioTable(summaries: Summary[]): Table {
  return {
    header: [
      'Service',
      'Scenario',
      'Conn.',
      'req/s',
      'p50 ms',
      'p99 ms',
      'Errors',
      'CPU µs/req',
      'Peak RSS MB',
    ],
    rows: summaries
      .filter((s) => !s.comparison)
      .map((s) => [
        s.service,
        s.scenario,
        String(s.connections),
        count(s.requestsPerSecond),
        fixed(s.p50),
        fixed(s.p99),
        String(s.errors),
        fixed(s.cpuUs, 0),
        megabytes(s.peakRssBytes),
      ]),
  };
}

/**
 * Each scenario measured against the peer: the medians of both, their ratios, and every round's
 * figures (service / peer).
 */
function peerTable(summaries: Summary[]): Table {
  const eachRound = (
    s: Summary,
    show: (figures: { requestsPerSecond: number; cpuUs: number }) => string,
  ) => s.peer!.rounds.map((round) => `${show(round.service)} / ${show(round.peer)}`).join(' · ');
  return {
    header: [
      'Service',
      'Scenario',
      'Conn.',
      'req/s',
      'CPU µs/req',
      'Peer req/s',
      'Peer CPU µs/req',
      'req/s ratio',
      'CPU ratio',
      'Errors (peer)',
      'req/s each round',
      'CPU µs/req each round',
    ],
    rows: summaries
      .filter((s) => s.peer)
      .map((s) => [
        s.service,
        s.scenario,
        String(s.connections),
        count(s.requestsPerSecond),
        fixed(s.cpuUs, 0),
        count(s.peer!.requestsPerSecond),
        fixed(s.peer!.cpuUs, 0),
        fixed(s.peer!.ratio, 2),
        fixed(s.peer!.cpuRatio, 2),
        `${s.errors} (${s.peer!.errors})`,
        eachRound(s, (figures) => count(figures.requestsPerSecond)),
        eachRound(s, (figures) => fixed(figures.cpuUs, 0)),
      ]),
  };
}

/** Each comparison's side beside its baseline's figures from the same rounds. */
function comparisonTable(summaries: Summary[]): Table {
  return {
    header: [
      'Service',
      'Scenario',
      'Compared',
      'Against',
      'Conn.',
      'req/s',
      'Against req/s',
      'Ratio',
      'CPU µs/req',
      'Against CPU µs/req',
      'CPU ratio',
      'p99 ms (against)',
      'Errors (against)',
    ],
    rows: summaries.flatMap((s) => {
      const against = s.comparison?.against;
      if (!against) return [];
      const baseline = summaries.find((b) => b.id === against.id);
      return [
        [
          s.service,
          s.scenario,
          s.comparison!.variant,
          against.variant,
          String(s.connections),
          count(s.requestsPerSecond),
          count(s.againstRequestsPerSecond),
          fixed(s.againstRatio, 2),
          fixed(s.cpuUs, 0),
          fixed(s.againstCpuUs, 0),
          fixed(s.againstCpuRatio, 2),
          `${fixed(s.p99)} (${fixed(baseline?.p99 ?? NaN)})`,
          `${s.errors} (${baseline?.errors ?? '–'})`,
        ],
      ];
    }),
  };
}

/**
 * Cells padded to their column's width, so that the table reads as well in a terminal; text columns
 * (the first `textColumns`) align left, figures right.
 */
function markdownTable({ header, rows }: Table, textColumns = 2): string {
  const lines = [header, ...rows].map((row) => row.map((cell) => cell.replaceAll('|', '\\|')));
  const widths = header.map((_, column) => Math.max(3, ...lines.map((row) => row[column]!.length)));
  const pad = (cell: string, column: number) =>
    column < textColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!);
  const rule = widths.map((width, column) =>
    column < textColumns ? '-'.repeat(width) : `${'-'.repeat(width - 1)}:`,
  );
  return [lines[0]!.map(pad), rule, ...lines.slice(1).map((row) => row.map(pad))]
    .map((row) => `| ${row.join(' | ')} |`)
    .join('\n');
}

/** The report in Markdown; for the terminal, without the explanations and the findings. */
export function markdownReport(report: Report, { terminal = false } = {}): string {
  const { startup, spa, loadAverage } = report;
  const explain = (...lines: string[]) => (terminal ? [] : lines);
  const againstPeer = peerTable(report.summaries);
  const out: string[] = [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench${report.quick ? ' -- --quick' : ''}\` ` +
      `on ${report.date}; regenerate it rather than editing ` +
      `it.${report.quick ? ' Quick run: the numbers are a smoke check only.' : ''}`,
    '',
    '## Machine',
    '',
    markdownTable(
      {
        header: [
          'CPU',
          'Cores',
          'Memory',
          'OS',
          'Node',
          'PostgreSQL',
          'Load average (1 min) before / after',
        ],
        rows: [
          [
            os.cpus()[0]?.model.trim() ?? 'unknown',
            String(os.availableParallelism()),
            `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
            `${os.type()} ${os.release()} ${os.arch()}`,
            process.version,
            report.postgres,
            loadAverage.map((load) => fixed(load, 2)).join(' / '),
          ],
        ],
      },
      7,
    ),
    ...explain('', '## How it is measured', '', ...report.method.map((line) => `- ${line}`)),
    '',
    '## Targets',
    '',
    markdownTable(
      {
        header: ['Target', 'Measured', 'Result'],
        rows: report.targets.map((t) => [
          t.target,
          t.measured,
          report.quick ? 'not enforced' : t.met ? 'met' : 'MISSED',
        ]),
      },
      3,
    ),
    '',
    ...(againstPeer.rows.length === 0
      ? []
      : [
          `## Against ${PEER} (bench/peer.ts)`,
          ...explain(
            '',
            'Each scenario on the service and on the peer back to back in every ' +
              'round (which of them goes first alternates from round to round), with ' +
              "the same connections and the same requests, each side's notes table " +
              'readied alike. req/s and CPU µs/req: medians over the rounds; CPU is ' +
              "the server process's own (not PostgreSQL's). req/s ratio: the service's " +
              "median over the peer's (target ≥ 0.85); CPU ratio: the service's median " +
              "CPU per request over the peer's (target ≤ 1.25). Errors: connection " +
              'errors, timeouts and answers other than 2xx, all rounds together. The ' +
              "last two columns give every round's figures, the service's / the peer's.",
          ),
          '',
          markdownTable(againstPeer),
          '',
        ]),
    '## Scenarios',
    ...explain(
      '',
      'Every scenario of the services (the comparisons aside): medians over the rounds; ' +
        'latencies as wrk measures them. CPU µs/req: CPU time of the server process per ' +
        'request during the measured run. Errors: connection errors, timeouts and answers ' +
        'other than 2xx, all rounds together. Peak RSS: the server process, ' +
        'sampled every 50 ms.',
    ),
    '',
    markdownTable(scenarioTable(report.summaries)),
    '',
    '## GET /notes: time, size, memory',
    '',
    markdownTable({
      header: [
        'Service',
        'Scenario',
        'Conn.',
        'req/s',
        'Mean ms',
        'p99 ms',
        'Response',
        'RSS growth MB',
        'Peak RSS MB',
      ],
      rows: report.summaries
        .filter((s) => s.responseBytes !== undefined)
        .map((s) => [
          s.service,
          s.scenario,
          String(s.connections),
          fixed(s.requestsPerSecond),
          fixed(s.mean),
          fixed(s.p99),
          `${kilobytes(s.responseBytes!)} kB`,
          megabytes(s.rssGrowthBytes),
          megabytes(s.peakRssBytes),
        ]),
    }),
  ];
  if (report.rss.afterRun.length) {
    const each = (values: number[]) => values.map(megabytes).join(' / ');
    out.push(
      '',
      `RSS of the server process in each round (MB), after the ordinary ` +
        `scenarios: ${each(report.rss.afterRun)}; idle before them (after start-up and the ` +
        `pages): ${each(report.rss.idle)}; after the hostile-load scenarios, which run ` +
        `last: ${each(report.rss.afterHostile)}. The three services run in that one process ` +
        `(as \`npm start\` runs them), so this is their combined RSS; PostgreSQL's processes ` +
        `are not included.`,
    );
  }
  const comparisons = comparisonTable(report.summaries);
  if (comparisons.rows.length) {
    out.push(
      '',
      '## Comparisons',
      ...explain(
        '',
        'Each row: a scenario on an instance that differs from the main one in one ' +
          'setting (Compared), beside the same load on the main instance (Against) ' +
          "in the same round. Ratio: req/s over the main instance's; CPU ratio: CPU " +
          "per request over the main instance's (above 1: more CPU a request); both " +
          "are the median of the rounds' ratios. CPU counts the server's own Node " +
          "processes (with workers, the primary and its workers), not PostgreSQL's.",
      ),
      '',
      markdownTable(comparisons, 4),
    );
  }
  if (startup) {
    const runs = (times: number[]) => [times.map(count).join(', '), count(median(times))];
    out.push(
      '',
      '## Start-up',
      '',
      markdownTable({
        header: ['Start', 'Runs (ms)', 'Median ms'],
        rows: [
          [
            'Cold: `npm start`, empty data folder, until all three ports answer',
            ...runs(startup.coldMs),
          ],
          ['Warm: `npm start` again on the same folder', ...runs(startup.warmMs)],
        ],
      }),
    );
  }
  if (spa) out.push(...pagesSection(spa));
  const warnings = report.summaries.flatMap((s) => s.warnings.map((w) => `${s.id}: ${w}`));
  if (report.problems.length || warnings.length)
    out.push(
      '',
      '## Problems during the run',
      '',
      ...[...report.problems, ...warnings].map((p) => `- ${p}`),
    );
  if (report.findings && !terminal) out.push('', report.findings.trim());
  return `${out.join('\n')}\n`;
}

/**
 * What each page transfers, how soon the login page is interactive, and Lighthouse's view of both.
 */
function pagesSection(spa: PagesReport): string[] {
  const out = [
    '',
    '## Pages',
    '',
    'Each page loaded once in headless Chromium with an empty cache (the dashboard ' +
      'signed in as the admin): bytes on the wire, compressed, headers included.',
    '',
    markdownTable(
      {
        header: ['Page', 'HTML kB', 'JavaScript kB', 'CSS kB', 'Total kB', 'Content-Encoding'],
        rows: spa.weights.map((w) => [
          w.page,
          kilobytes(w.documentBytes),
          kilobytes(w.scriptBytes),
          kilobytes(w.stylesheetBytes),
          kilobytes(w.totalBytes),
          w.encodings.join(', '),
        ]),
      },
      1,
    ),
  ];
  if (spa.timeToInteractiveMs.length) {
    out.push(
      '',
      `Login page time to interactive in headless Chromium (fresh context each load, ` +
        `navigation start until the form's button is enabled by the script and the ` +
        `main thread takes the next ` +
        `task): ${spa.timeToInteractiveMs.map((v) => fixed(v)).join(', ')} ms, ` +
        `median ${fixed(median(spa.timeToInteractiveMs))} ms.`,
    );
  }
  if (spa.lighthouse.length) {
    const typical = new Set(
      ['/login', '/dashboard'].map((page) =>
        medianRun(spa.lighthouse.filter((run) => run.page === page)),
      ),
    );
    out.push(
      '',
      '### Lighthouse',
      '',
      "Lighthouse 12 (npm `lighthouse`) on Debian's Chromium (`--headless --no-sandbox " +
        '--disable-gpu`), default mobile settings (simulated slow 4G, CPU slowed 4×), ' +
        "every run on a fresh Chromium; the targets are judged on each page's median " +
        'run (by first contentful paint), marked ✱. Comparison: the Next.js 16 build ' +
        'of the same spec scored 96–99 for performance with a first contentful paint ' +
        "of 0.88 s. /login may be indexed (the service's public entry point); the " +
        "dashboard carries `noindex` (an account's page), which Lighthouse's SEO category " +
        'fails through its is-crawlable audit, so SEO is a target on /login only.',
      '',
      markdownTable(
        {
          header: [
            'Page',
            'Performance',
            'Accessibility',
            'Best practices',
            'SEO',
            'FCP ms',
            'LCP ms',
            'TBT ms',
            'CLS',
            'JS kB',
            'Total kB',
            'Audits not passed',
          ],
          rows: spa.lighthouse.map((run) => [
            `${run.page}${typical.has(run) ? ' ✱' : ''}`,
            String(run.performance),
            String(run.accessibility),
            String(run.bestPractices),
            String(run.seo),
            count(run.firstContentfulPaintMs),
            count(run.largestContentfulPaintMs),
            count(run.totalBlockingTimeMs),
            fixed(run.cumulativeLayoutShift, 3),
            kilobytes(run.scriptBytes),
            kilobytes(run.totalBytes),
            run.failed.join(', ') || 'none',
          ]),
        },
        1,
      ),
    );
  }
  return out;
}
