import fs from 'node:fs/promises';

/** Linux process facts read from /proc: memory and the process tree. */

/** Resident set size of `pid` in bytes (VmRSS), or NaN once the process is gone. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** Samples the RSS of `pid` every `intervalMs` until stopped; `stop()` gives the highest seen. */
export function sampleRss(pid: number, intervalMs = 50): { stop(): Promise<number> } {
  let peak = 0;
  let sampling = Promise.resolve();
  const take = () => {
    sampling = rssBytes(pid).then((rss) => {
      if (rss > peak) peak = rss;
    });
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      take();
      await sampling;
      return peak;
    },
  };
}

/** CPU time (user + system) `pid` has used so far, in milliseconds; NaN once it is gone. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, counted in clock ticks (USER_HZ, 100 on Linux).
  return fields.length > 12 ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : Number.NaN;
}

async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The command name sits in parentheses and may itself hold spaces: read after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.length > 1 ? Number(fields[1]) : undefined;
}

export async function commandLine(pid: number): Promise<string[]> {
  const raw = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return raw.split('\0').filter(Boolean);
}

/** Every live process below `root` in the process tree. */
export async function descendants(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = await parentOf(Number(entry));
    if (parent !== undefined) parents.set(Number(entry), parent);
  }
  const below = (pid: number): number[] =>
    [...parents].filter(([, parent]) => parent === pid).flatMap(([child]) => [child, ...below(child)]);
  return below(root);
}
