import { readFileSync } from 'node:fs';

/**
 * Descriptors kept for everything but client connections: database pools, files, PostgreSQL's
 * pipes.
 */
export const RESERVED_DESCRIPTORS = 1_024;

/**
 * This process's limit on open files, or undefined where there is no /proc. Connections are files:
 * the limit is what an idle-connection flood hits first. Node raises its soft limit to the hard one
 * as it starts, so the soft limit read here is already as high as the process may go.
 */
export function fileLimit(): number | undefined {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft === undefined) return undefined;
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
  } catch {
    return undefined;
  }
}
