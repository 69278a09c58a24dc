import type { Summary } from './aggregate.js';
import type { Machine, SpaReport, StartupTimes } from './results.js';
import { median } from './stats.js';
import type { TargetCheck } from './targets.js';

export interface Report {
  quick: boolean;
  machine: Machine;
  method: string[];
  summaries: Summary[];
  targets: TargetCheck[];
  startup?: StartupTimes;
  spa?: SpaReport;
  rssAfterRunBytes?: number;
  /** Before the first load round, after start-up and the page loads. */
  rssIdleBytes?: number;
  problems: string[];
  /** The statements each notes request issues, as recorded from the service (text only). */
  statements?: { service: string; operation: string; sql: string[] }[];
  findings?: string;
}

type Row = string[];

const MB = 1024 * 1024;
const fixed = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);
const count = (value: number) => Math.round(value).toLocaleString('en');
const megabytes = (bytes: number | undefined) => (bytes === undefined || !bytes ? '–' : (bytes / MB).toFixed(1));
const kilobytes = (bytes: number) => (bytes / 1000).toFixed(1);
const verdict = (check: TargetCheck, quick: boolean) => (quick ? 'not enforced' : check.met ? 'met' : 'MISSED');

function scenarioRows(summaries: Summary[]): { header: Row; rows: Row[] } {
  return {
    header: ['Service', 'Scenario', 'Conn.', 'req/s', 'p50 ms', 'p99 ms', 'Errors', 'Limit req/s', 'Ratio', 'CPU µs/req', 'CPU ratio', 'Peak RSS MB'],
    rows: summaries.map((s) => [
      s.service,
      s.scenario,
      String(s.connections),
      count(s.requestsPerSecond),
      fixed(s.p50),
      fixed(s.p99),
      String(s.errors),
      s.limit ? `${count(s.limit.requestsPerSecond)} (${s.limit.kind === 'http' ? 'HTTP' : `HTTP+${s.limit.other!.name === 'database' ? 'DB' : 'hash'}`})` : '–',
      fixed(s.ratio, 2),
      fixed(s.cpuUs, 0),
      fixed(s.cpuRatio, 2),
      megabytes(s.peakRssBytes),
    ]),
  };
}

function limitRows(report: Report): { header: Row; rows: Row[] } {
  const rows: Row[] = report.summaries
    .filter((s) => s.limit)
    .map((s) => {
      const other = s.limit!.other;
      return [
        s.service,
        s.scenario,
        String(s.connections),
        count(s.limit!.http),
        fixed(s.limit!.httpCpuUs, 0),
        other ? `${other.name === 'database' ? 'DB' : 'hash'} ${count(other.requestsPerSecond)}` : '–',
        other ? fixed(other.p50) : '–',
        other ? fixed(other.p99) : '–',
        other ? fixed(other.cpuUs, 0) : '–',
        count(s.limit!.requestsPerSecond),
        s.koaFloor ? `${count(s.koaFloor.requestsPerSecond)} (${fixed(s.koaFloor.ratio, 2)}), ${fixed(s.koaFloor.cpuUs, 0)} µs` : '–',
      ];
    });
  return {
    header: ['Service', 'Scenario', 'Conn.', 'HTTP req/s', 'HTTP CPU µs/req', 'Other req/s', 'Other p50 ms', 'Other p99 ms', 'Other CPU µs/req', 'Limit req/s', 'Koa alone req/s (ratio), CPU/req'],
    rows,
  };
}

function targetRows(report: Report): { header: Row; rows: Row[] } {
  return { header: ['Target', 'Measured', 'Result'], rows: report.targets.map((t) => [t.target, t.measured, verdict(t, report.quick)]) };
}

function textTable({ header, rows }: { header: Row; rows: Row[] }): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (row: Row) => row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** Text columns (the first `textColumns`) align left, figures right. */
function markdownTable({ header, rows }: { header: Row; rows: Row[] }, textColumns = 2): string {
  const escape = (cell: string) => cell.replaceAll('|', '\\|');
  return [header, header.map((_, column) => (column < textColumns ? '---' : '---:')), ...rows]
    .map((row) => `| ${row.map(escape).join(' | ')} |`)
    .join('\n');
}

export function terminalReport(report: Report): string {
  const parts = [
    `${report.machine.cpuModel}, ${report.machine.cores} cores, Node ${report.machine.node}, PostgreSQL ${report.machine.postgres}${report.quick ? ' (quick run: numbers are a smoke check only)' : ''}`,
    '',
    textTable(scenarioRows(report.summaries)),
    '',
    textTable(limitRows(report)),
  ];
  const extra: string[] = [];
  if (report.startup) extra.push(`Start-up: cold ${fixed(median(report.startup.coldMs), 0)} ms, warm ${fixed(median(report.startup.warmMs), 0)} ms`);
  if (report.spa) {
    extra.push(`Pages: ${kilobytes(report.spa.rawBytes)} kB JS raw, ${kilobytes(report.spa.gzipBytes)} kB gzip; login time to interactive ${fixed(median(report.spa.timeToInteractiveMs))} ms`);
  }
  if (report.rssAfterRunBytes !== undefined) {
    extra.push(`Server process RSS: ${megabytes(report.rssIdleBytes)} MB idle before the rounds, ${megabytes(report.rssAfterRunBytes)} MB after`);
  }
  extra.push(`Load average (1 min): ${fixed(report.machine.loadAverage.before, 2)} before the rounds, ${fixed(report.machine.loadAverage.after, 2)} after`);
  parts.push('', ...extra, '', textTable(targetRows(report)));
  if (report.problems.length) parts.push('', 'Problems:', ...report.problems.map((p) => `- ${p}`));
  return parts.join('\n');
}

export function markdownReport(report: Report): string {
  const { machine } = report;
  const lists = report.summaries.filter((s) => s.responseBytes !== undefined);
  const out: string[] = [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench${report.quick ? ' -- --quick' : ''}\` on ${machine.date}; regenerate it rather than editing it.`,
    '',
    '## Machine',
    '',
    markdownTable({
      header: ['CPU', 'Cores', 'Memory', 'OS', 'Node', 'PostgreSQL', 'Load average (1 min) before / after'],
      rows: [[machine.cpuModel, String(machine.cores), `${(machine.memoryBytes / 1024 ** 3).toFixed(1)} GiB`, machine.os, machine.node, machine.postgres, `${fixed(machine.loadAverage.before, 2)} / ${fixed(machine.loadAverage.after, 2)}`]],
    }, 7),
    '',
    '## How it is measured',
    '',
    ...report.method.map((line) => `- ${line}`),
    '',
    '## Targets',
    '',
    markdownTable(targetRows(report), 3),
    '',
    '## Scenarios',
    '',
    'Ratio: req/s divided by the limit for the same work, measured next to it (median over the rounds). CPU µs/req: CPU time of the server process per request during the measured run. CPU ratio: CPU per request of the limits for the same work (bare HTTP server, plus the pg client or the password check in the benchmark process) divided by the service\'s: the same comparison made with a measure that other work on the machine hardly moves.',
    '',
    markdownTable(scenarioRows(report.summaries)),
    '',
    '## Limits',
    '',
    markdownTable(limitRows(report)),
    '',
    '## GET /notes: time, size, memory',
    '',
    markdownTable({
      header: ['Service', 'Scenario', 'Conn.', 'Mean ms', 'p99 ms', 'Response', 'RSS growth MB', 'Peak RSS MB'],
      rows: lists.map((s) => [s.service, s.scenario, String(s.connections), fixed(s.mean), fixed(s.p99), `${kilobytes(s.responseBytes!)} kB`, megabytes(s.rssGrowthBytes), megabytes(s.peakRssBytes)]),
    }),
  ];
  if (report.rssAfterRunBytes !== undefined) {
    out.push('', `RSS of the server process after the run: ${megabytes(report.rssAfterRunBytes)} MB (idle before the first round: ${megabytes(report.rssIdleBytes)} MB). The three services run in that one process (as \`npm start\` runs them), so this is their combined RSS; PostgreSQL's processes are not included.`);
  }
  if (report.startup) {
    out.push('', '## Start-up', '', markdownTable({
      header: ['Start', 'Runs (ms)', 'Median ms'],
      rows: [
        ['Cold: `npm start`, empty data folder, until all three ports answer', report.startup.coldMs.map((v) => count(v)).join(', '), count(median(report.startup.coldMs))],
        ['Warm: `npm start` again on the same folder', report.startup.warmMs.map((v) => count(v)).join(', '), count(median(report.startup.warmMs))],
      ],
    }));
  }
  if (report.spa) {
    const { spa } = report;
    out.push('', '## Pages', '', markdownTable({
      header: ['JavaScript file', 'Raw kB', 'Gzip kB'],
      rows: [
        ...spa.files.map((f) => [f.file, kilobytes(f.rawBytes), kilobytes(f.gzipBytes)]),
        ['**Total** (`dist/web`, both pages)', kilobytes(spa.rawBytes), kilobytes(spa.gzipBytes)],
      ],
    }));
    if (spa.timeToInteractiveMs.length) {
      out.push('', `Login page time to interactive in headless Chromium (fresh context each load, navigation start until the form is rendered with its button enabled and the main thread takes the next task): ${spa.timeToInteractiveMs.map((v) => fixed(v)).join(', ')} ms, median ${fixed(median(spa.timeToInteractiveMs))} ms.`);
    }
  }
  if (report.statements?.length) {
    out.push('', '## Recorded SQL', '', 'What each notes request sends to PostgreSQL (recorded from the service code; the database limits replay exactly this):', '');
    for (const { service, operation, sql } of report.statements) {
      out.push(`- ${service} ${operation}: ${sql.map((text) => `\`${text}\``).join(', then ')}`);
    }
  }
  const warnings = report.summaries.flatMap((s) => s.warnings.map((w) => `${s.id}: ${w}`));
  if (report.problems.length || warnings.length) {
    out.push('', '## Problems during the run', '', ...[...report.problems, ...warnings].map((p) => `- ${p}`));
  }
  if (report.findings) out.push('', report.findings.trim());
  return `${out.join('\n')}\n`;
}
