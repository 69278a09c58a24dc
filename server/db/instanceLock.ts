import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StartupError } from '../http/errors.js';

/** Who holds a data folder. */
interface Holder {
  pid: number;
  /**
   * When the process started, as the kernel counts it (Linux): a pid reused by another process does
   * not match.
   */
  processStart?: string;
  since: string;
}

export interface InstanceLock {
  release(): Promise<void>;
}

/**
 * Makes this process the only instance on `dataDir`: the embedded PostgreSQL there is started,
 * stopped and restarted by it alone. A start that finds a live holder refuses at once, touching
 * nothing; one that finds the lock of a process that is gone (killed) takes it over. Taking the
 * lock is one atomic step (a hard link of a complete file), so of two starts at the same moment
 * exactly one wins.
 */
export async function lockDataDir(
  dataDir: string,
  otherInstanceHint: string,
): Promise<InstanceLock> {
  await fs.mkdir(dataDir, { recursive: true });
  const lock = path.join(dataDir, 'instance.lock');
  const mine: Holder = {
    pid: process.pid,
    processStart: processStart(process.pid),
    since: new Date().toISOString(),
  };
  const draft = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await fs.writeFile(draft, JSON.stringify(mine));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fs.link(draft, lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 5) throw error;
      }
      const holder = await readHolder(lock);
      if (holder && isAlive(holder)) {
        throw new StartupError(
          `Another instance (pid ${holder.pid}, running since ${holder.since}) is using DATA_DIR=${dataDir}. ` +
            `Stop it first, or run a second instance with another DATA_DIR and other ports (${otherInstanceHint}).`,
        );
      }
      // Its holder is gone: move the stale lock aside (only one of several starts can) and try
      // again.
      await fs.rename(lock, `${lock}.stale.${process.pid}`).then(
        () => fs.rm(`${lock}.stale.${process.pid}`, { force: true }),
        () => undefined,
      );
    }
  } finally {
    await fs.rm(draft, { force: true });
  }
  return {
    async release() {
      const holder = await readHolder(lock);
      if (holder?.pid === process.pid) await fs.rm(lock, { force: true });
    },
  };
}

async function readHolder(lock: string): Promise<Holder | undefined> {
  try {
    return JSON.parse(await fs.readFile(lock, 'utf8')) as Holder;
  } catch {
    // Unreadable or half-written by hand: nobody can be proven to hold it.
    return undefined;
  }
}

function isAlive({ pid, processStart: started }: Holder): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return started === undefined || processStart(pid) === undefined || processStart(pid) === started;
}

/**
 * Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined where there is no
 * /proc.
 */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
