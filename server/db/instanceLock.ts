import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StartupError } from '../http/errors.js';

/** Who holds a data folder; `processStart` tells its process from another that reuses its pid. */
interface Holder {
  pid: number;
  processStart?: string;
  since: string;
}

/**
 * Makes this process the only instance on `dataDir`, which alone starts and stops its embedded
 * PostgreSQL. A live holder is refused at once; the lock of a killed one is taken over. Taking it
 * is one atomic step (a hard link of a complete file): of two starts at once, exactly one wins.
 */
export async function lockDataDir(
  dataDir: string,
  otherInstanceHint: string,
): Promise<{ release(): Promise<void> }> {
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
          `Another instance (pid ${holder.pid}, running since ${holder.since}) ` +
            `is using DATA_DIR=${dataDir}. ` +
            `Stop it first, or run a second instance with another DATA_DIR and other ports ` +
            `(${otherInstanceHint}).`,
        );
      }
      // Its holder is gone: move the stale lock aside (only one of several starts can) and retry.
      const stale = `${lock}.stale.${process.pid}`;
      await fs.rename(lock, stale).then(
        () => fs.rm(stale, { force: true }),
        () => undefined,
      );
    }
  } finally {
    await fs.rm(draft, { force: true });
  }
  return {
    async release() {
      if ((await readHolder(lock))?.pid === process.pid) await fs.rm(lock, { force: true });
    },
  };
}

/** Undefined when unreadable or half-written by hand: nobody can be proven to hold it. */
const readHolder = (lock: string): Promise<Holder | undefined> =>
  fs
    .readFile(lock, 'utf8')
    .then((text) => JSON.parse(text) as Holder)
    .catch(() => undefined);

function isAlive({ pid, processStart: started }: Holder): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = started && processStart(pid);
  return now === undefined || now === started;
}

/** The kernel's start time of the process (Linux); undefined where there is no /proc. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
