import { pino } from 'pino';
import { loggerOptions, type Logger } from '../server/logger.js';

export interface LogLine {
  level: number;
  msg?: string;
  err?: { message: string; type?: string; stack?: string };
  [key: string]: unknown;
}

export interface LogCapture {
  /** A logger whose lines land in `lines` instead of the terminal. */
  logger: Logger;
  lines: LogLine[];
  /** Lines at error level or above. */
  errors(): LogLine[];
  clear(): void;
}

/** A pino logger at `level` that keeps its lines, to see what a service logs. */
export function captureLogs(level = 'info'): LogCapture {
  const lines: LogLine[] = [];
  const logger = pino(loggerOptions(level), {
    write: (line: string) => void lines.push(JSON.parse(line) as LogLine),
  });
  return {
    logger,
    lines,
    errors: () => lines.filter((line) => line.level >= 50),
    clear: () => void lines.splice(0),
  };
}

/** The JSON log lines of a process's output (pino), other lines skipped. */
export function logLines(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}
