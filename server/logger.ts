import { createRequire } from 'node:module';
import { pino, type Logger, type LoggerOptions } from 'pino';
import type pinoPretty from 'pino-pretty';

export type { Logger };

/** Fields added to every line (the trace it belongs to, say). */
export type LineFields = () => Record<string, unknown>;

/**
 * Readable lines at a terminal (pino-pretty in this thread, so that they stay in order with what
 * else the process prints), one JSON object per line otherwise.
 */
export function createLogger(
  level: string,
  format: 'pretty' | 'json' = process.stdout.isTTY ? 'pretty' : 'json',
  fields?: LineFields,
): Logger {
  if (format === 'json') return pino(loggerOptions(level, fields));
  // Loaded only for a terminal: it takes a while to load.
  const pretty = createRequire(import.meta.url)('pino-pretty') as typeof pinoPretty;
  return pino(
    loggerOptions(level, fields),
    pretty({
      colorize: process.stdout.isTTY,
      translateTime: 'SYS:HH:MM:ss.l',
      singleLine: true,
      // A request line reads as one: `[notes8080] GET /notes/1 → 200 (1.2 ms)`.
      messageFormat:
        '{if service}[{service}] {end}{msg}{if method}{method} {path} → {status} ({ms} ms){end}',
      ignore: 'pid,hostname,service,method,path,status,ms',
    }),
  );
}

/** Logs never hold secrets: cookie and authorization headers are redacted wherever they appear. */
export function loggerOptions(level: string, fields?: LineFields): LoggerOptions {
  return {
    level,
    ...(fields && { mixin: fields }),
    serializers: { err: safeError },
    redact: {
      paths: ['*.headers.cookie', '*.headers.authorization', '*.headers["set-cookie"]'],
      censor: '[redacted]',
    },
  };
}

// Only these fields of an error: a parser's error can carry the raw request, cookies included.
function safeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { name, message, stack, code } = error as Error & { code?: unknown };
  return { type: name, message, ...(code !== undefined && { code }), stack };
}
