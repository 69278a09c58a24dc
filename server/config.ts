import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as yup from 'yup';
import { StartupError } from './http/errors.js';
import { envSchema, trustProxyOf, type ServiceName } from './variables.js';

export { ENVIRONMENT_VARIABLES, SERVICE_NAMES, type ServiceName } from './variables.js';

export interface Listen {
  host: string;
  port: number;
}

/** Whom a service answers (host names; undefined: any) and believes (forwarding proxies). */
export interface Edge {
  allowedHosts?: string[];
  trustProxy?: number | string[];
  /** Behind HTTPS (HSTS). */
  production: boolean;
}

export type Config = ReturnType<typeof loadConfig>;
export type DatabaseConfig = Config['database'];
export type NotesConfig = Config['notes'];
export type AuthConfig = Config['auth'];

/** A setting the process cannot run with; `message` is one line per problem, for a person. */
export class ConfigError extends StartupError {
  name = 'ConfigError';
}

/** Variables whose values are never repeated in a message. */
const SECRETS = new Set(['AUTH_USER_PASSWORD', 'AUTH_ADMIN_PASSWORD', 'DATABASE_URL']);
const MIN_PRODUCTION_PASSWORD = 12;
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const isLoopback = (host: string) =>
  host === 'localhost' || host === '::1' || host.startsWith('127.');
// Node's parser skips a line it cannot read without a word: every line is checked first.
const ENV_FILE_LINE = /^\s*(#.*|(export\s+)?[A-Za-z_][A-Za-z0-9_]*=.*)?$/;

/** The variables that say where `service` listens, for messages. */
export const listenVariables = (service: string) => ({
  host: `${service.toUpperCase()}_HOST`,
  port: `${service.toUpperCase()}_PORT`,
});

/**
 * The process's environment over the working folder's `.env`, if any (a variable already set wins).
 * Its text is never repeated in a message: it may hold passwords.
 */
export function processEnvironment(): NodeJS.ProcessEnv {
  const file = path.resolve('.env');
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return process.env;
    throw new StartupError(`${file} cannot be read: ${(error as Error).message}`);
  }
  const wrong = text.split(/\r?\n/).findIndex((line) => !ENV_FILE_LINE.test(line));
  if (wrong !== -1)
    throw new StartupError(
      `${file}, line ${wrong + 1}: expected NAME=value, a # comment or a blank line`,
    );
  process.loadEnvFile(file);
  return process.env;
}

/** The settings of the process, read from `source` (by default its environment over `.env`). */
export function loadConfig(source: NodeJS.ProcessEnv = processEnvironment()) {
  // Empty variables count as unset, so `FOO= npm start` falls back to the default.
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
  let env;
  try {
    env = envSchema.validateSync(present, { abortEarly: false, stripUnknown: true });
  } catch (error) {
    if (!(error instanceof yup.ValidationError)) throw error;
    const lines = error.inner.map(({ path = '', message }) => {
      const shown = SECRETS.has(path) ? '(not shown)' : JSON.stringify(present[path]);
      return `${path}=${shown} is not valid: expected ${message}`;
    });
    throw new ConfigError([...new Set(lines)].join('\n'));
  }

  const production = env.NODE_ENV === 'production';
  const accounts: { email: string; password: string; role: 'user' | 'admin' }[] = [
    { email: env.AUTH_USER_EMAIL, password: env.AUTH_USER_PASSWORD, role: 'user' },
    { email: env.AUTH_ADMIN_EMAIL, password: env.AUTH_ADMIN_PASSWORD, role: 'admin' },
  ];
  const services = [...new Set(env.SERVICES.split(',').map((name) => name.trim() as ServiceName))];
  // The accounts are the login service's: a process without it has no password to guard.
  if (production && services.includes('auth')) refuseWeakPasswords(accounts);
  // A create of the largest body spends up to twice its texts (with an Idempotency-Key, its kept
  // answer holds them again) and about a kilobyte more: a budget below that could never pay for it.
  const largestCreate = 2 * env.BODY_LIMIT_BYTES + 1024;
  if (env.NOTES_WRITE_BYTES_PER_MINUTE < largestCreate) {
    throw new ConfigError(
      `NOTES_WRITE_BYTES_PER_MINUTE=${env.NOTES_WRITE_BYTES_PER_MINUTE} is too small: ` +
        `a create of a body of BODY_LIMIT_BYTES=${env.BODY_LIMIT_BYTES} ` +
        `may spend ${largestCreate}, ` +
        `and would never be written; set it to at least that`,
    );
  }
  const listen: Record<ServiceName, Listen> = {
    notes8080: { host: env.NOTES8080_HOST, port: env.NOTES8080_PORT },
    notes8000: { host: env.NOTES8000_HOST, port: env.NOTES8000_PORT },
    auth: { host: env.AUTH_HOST, port: env.AUTH_PORT },
  };
  const taken = env.METRICS_PORT && services.find((name) => listen[name].port === env.METRICS_PORT);
  if (taken)
    throw new ConfigError(
      `METRICS_PORT=${env.METRICS_PORT} is ${listenVariables(taken).port}'s: ` +
        `the metrics need a port of their own`,
    );
  const trustProxy = env.TRUST_PROXY === undefined ? undefined : trustProxyOf(env.TRUST_PROXY);
  const edge = (allowed: string | undefined, fallback?: string[]): Edge => ({
    allowedHosts:
      allowed === undefined
        ? fallback
        : allowed.trim() === '*'
          ? undefined
          : allowed.split(',').map((host) => host.trim().toLowerCase()),
    trustProxy,
    production,
  });
  return {
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    database: {
      // Absent: the project starts its own embedded PostgreSQL under `dataDir`.
      url: env.DATABASE_URL,
      dataDir: path.resolve(env.DATA_DIR),
      poolMax: env.DB_POOL_MAX,
      timeoutMs: env.DB_TIMEOUT_MS,
      startupRetryMs: env.DB_STARTUP_RETRY_MS,
    },
    notes: {
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      maxBytes: env.NOTES_MAX_BYTES,
      idempotencyTtlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
      writeBytesPerMinute: env.NOTES_WRITE_BYTES_PER_MINUTE,
    },
    connections: {
      max: env.MAX_CONNECTIONS,
      idleTimeoutMs: env.CLIENT_IDLE_TIMEOUT_MS,
      headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
      drainMs: env.SHUTDOWN_DRAIN_MS,
    },
    spa: { mode: env.SPA_MODE, vitePort: env.VITE_PORT },
    listen,
    services,
    metrics:
      env.METRICS_PORT === undefined
        ? undefined
        : ({ host: env.METRICS_HOST, port: env.METRICS_PORT } satisfies Listen),
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? undefined
        : { serviceName: env.OTEL_SERVICE_NAME ?? services.join(',') },
    edge: {
      notes8080: edge(env.NOTES8080_ALLOWED_HOSTS),
      // Bound to this machine only, it answers only this machine's names: a page elsewhere that
      // points its own host name at 127.0.0.1 (DNS rebinding) gets nothing.
      notes8000: edge(
        env.NOTES8000_ALLOWED_HOSTS,
        isLoopback(env.NOTES8000_HOST) ? LOOPBACK_HOSTS : undefined,
      ),
      auth: edge(env.AUTH_ALLOWED_HOSTS),
    } satisfies Record<ServiceName, Edge>,
    auth: {
      production,
      accounts,
      sessions: {
        ttlSeconds: env.SESSION_TTL_SECONDS,
        max: env.SESSION_MAX,
        maxPerUser: env.SESSION_MAX_PER_USER,
        store: env.SESSION_STORE,
        sweepIntervalMs: env.SESSION_SWEEP_INTERVAL_MS,
      },
      passwordHashCost: env.PASSWORD_HASH_COST,
      deviceTrustDays: env.DEVICE_TRUST_DAYS,
      audit: { retentionDays: env.AUDIT_RETENTION_DAYS, maxEvents: env.AUDIT_MAX_EVENTS },
    },
  };
}

// Production mode refuses a password anyone could guess.
function refuseWeakPasswords(accounts: { email: string; password: string; role: string }[]) {
  const defaults = envSchema.getDefault();
  const documented: string[] = [defaults.AUTH_USER_PASSWORD, defaults.AUTH_ADMIN_PASSWORD];
  const lines = accounts.flatMap(({ email, password, role }) => {
    const variable = `AUTH_${role.toUpperCase()}_PASSWORD`;
    if (documented.includes(password))
      return [
        `${variable} is a documented default password: production mode needs one of your own`,
      ];
    if (password.length < MIN_PRODUCTION_PASSWORD)
      return [
        `${variable} is shorter than ${MIN_PRODUCTION_PASSWORD} characters: ` +
          `production mode needs a longer password`,
      ];
    if (password.toLowerCase() === email.toLowerCase())
      return [`${variable} is the account's own email: production mode needs another password`];
    return [];
  });
  if (lines.length > 0) throw new ConfigError(lines.join('\n'));
}
