import { readFileSync, readdirSync } from 'node:fs';
import type { StartedProcess } from '../support/process.js';

/** SIGTERM, then SIGKILL if the process has not ended within `graceMs`. Resolves with how it ended. */
export async function stopServices(services: StartedProcess | undefined, graceMs = 15_000): Promise<number | string | undefined> {
  if (!services) return undefined;
  if (services.child.exitCode !== null || services.child.signalCode !== null) return services.exited;
  services.child.kill('SIGTERM');
  const timer = setTimeout(() => services.child.kill('SIGKILL'), graceMs);
  try {
    return await services.exited;
  } finally {
    clearTimeout(timer);
  }
}

function parentOf(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: the ppid follows its last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/**
 * The process that runs `server/main.ts`: the spawned one itself with `node --import tsx`, or
 * a child node when started through the `tsx` command. Its other children (esbuild, PostgreSQL)
 * do not name main.ts.
 */
export function serverProcess(rootPid: number): number {
  let best = rootPid;
  let bestDepth = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const depth = depthBelow(pid, rootPid);
    const command = commandLine(pid);
    if (depth !== undefined && depth > bestDepth && command.includes('server/main.ts')) {
      best = pid;
      bestDepth = depth;
    }
  }
  return best;
}

/** How many generations `pid` lies below `ancestor` (0 for itself), or undefined when it does not. */
function depthBelow(pid: number, ancestor: number): number | undefined {
  let depth = 0;
  for (let at: number | undefined = pid; at !== undefined && at > 1; at = parentOf(at)) {
    if (at === ancestor) return depth;
    depth++;
  }
  return undefined;
}

/** Resident set size of a process in KiB (VmRSS), or NaN once it has gone. */
export function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** The JSON log lines of a process's output (pino), other lines skipped. */
export function logLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
