import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Logger } from './logger.js';

/** Descriptors kept for everything but client connections: database pools, files, PostgreSQL's pipes. */
export const RESERVED_DESCRIPTORS = 1_024;

/**
 * Raises this process's soft limit on open files to its hard limit (Node has no call for it;
 * util-linux's `prlimit` sets it from outside) and returns the limit in force, or undefined where
 * there is no /proc. Connections are files: the soft limit, often far below the hard one, is what
 * an idle-connection flood hits first.
 */
export function raiseFileLimit(logger: Logger): number | undefined {
  const limits = fileLimits();
  if (limits && limits.soft < limits.hard) {
    try {
      execFileSync('prlimit', [`--pid=${process.pid}`, `--nofile=${limits.hard}:${limits.hard}`]);
    } catch (error) {
      logger.warn({ err: (error as Error).message, soft: limits.soft }, 'could not raise the open files limit');
    }
  }
  return fileLimits()?.soft;
}

function fileLimits(): { soft: number; hard: number } | undefined {
  try {
    const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!line) return undefined;
    const value = (text: string) => (text === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(text));
    return { soft: value(line[1]!), hard: value(line[2]!) };
  } catch {
    return undefined;
  }
}
