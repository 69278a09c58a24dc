import { readFileSync } from 'node:fs';

/** Descriptors kept for everything but client connections: pools, files, PostgreSQL's pipes. */
export const RESERVED_DESCRIPTORS = 1_024;

/** This process's limit on open files (Node raised it to the hard one), or undefined. */
export function fileLimit(): number | undefined {
  try {
    const soft = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft === undefined) return undefined;
    return soft === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(soft);
  } catch {
    return undefined;
  }
}
