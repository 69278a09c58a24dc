import path from 'node:path';
import * as yup from 'yup';
import { processEnvironment } from './environment.js';
import { StartupError } from './http/errors.js';
import {
  DEFAULT_PASSWORDS,
  envSchema,
  ENVIRONMENT_VARIABLES,
  isLoopback,
  LOOPBACK_HOSTS,
  MIN_PRODUCTION_PASSWORD,
  SERVICE_NAMES,
  trustProxyOf,
  type Env,
  type ServiceName,
} from './variables.js';

export { ENVIRONMENT_VARIABLES, SERVICE_NAMES, type ServiceName };

/** The settings of the process, read from its environment (and `.env`) here and nowhere else. */

/** Variables whose values are never repeated in a message. */
const SECRETS = new Set(['AUTH_USER_PASSWORD', 'AUTH_ADMIN_PASSWORD', 'DATABASE_URL']);

export interface DatabaseConfig {
  /** Absent: the project starts its own embedded PostgreSQL under `dataDir`. */
  url?: string;
  dataDir: string;
  poolMax: number;
  timeoutMs: number;
  startupRetryMs: number;
}

export interface Listen {
  host: string;
  port: number;
}

/** What a service answers and whom it believes, beside where it listens. */
export interface Edge {
  /** Host names (with or without a port) the service answers; undefined: any. */
  allowedHosts?: string[];
  /**
   * Forwarding headers believed from these proxies (hops, or addresses and subnets); undefined:
   * none.
   */
  trustProxy?: number | string[];
  /** Production mode: behind HTTPS (HSTS). */
  production: boolean;
}

export interface AuthConfig {
  production: boolean;
  accounts: { email: string; password: string; role: 'user' | 'admin' }[];
  sessions: {
    ttlSeconds: number;
    max: number;
    maxPerUser: number;
    store: 'memory' | 'postgres';
    sweepIntervalMs: number;
  };
  passwordHashCost: number;
  /** Days a device cookie is trusted after its login. */
  deviceTrustDays: number;
  /** The security events kept for administrators: for how many days, and how many at most. */
  audit: { retentionDays: number; maxEvents: number };
}

export interface NotesConfig {
  bodyLimitBytes: number;
  /** Enforced by the pool's connections (see storageCap.ts). */
  maxBytes: number;
  idempotencyTtlSeconds: number;
  /** Per client address and process (see writeBudget.ts). */
  writeBytesPerMinute: number;
}

export interface Config {
  logLevel: Env['LOG_LEVEL'];
  /** Undefined: pretty at a terminal, JSON otherwise. */
  logFormat?: 'pretty' | 'json';
  database: DatabaseConfig;
  notes: NotesConfig;
  connections: { max?: number; idleTimeoutMs: number; headersTimeoutMs: number; drainMs: number };
  spa: { mode: Env['SPA_MODE']; vitePort: number };
  /** Where each service listens: `<NAME>_HOST` and `<NAME>_PORT` of the service's name. */
  listen: Record<ServiceName, Listen>;
  /** Each service's edge: `<NAME>_ALLOWED_HOSTS`, TRUST_PROXY, production mode. */
  edge: Record<ServiceName, Edge>;
  /** The services this process runs. */
  services: ServiceName[];
  /** Where the metrics are served (METRICS_HOST, METRICS_PORT); undefined: nothing is measured. */
  metrics?: Listen;
  /**
   * The traces' service name, when they are sent (OTEL_EXPORTER_OTLP_ENDPOINT, read by the SDK
   * itself); undefined: no traces.
   */
  tracing?: { serviceName: string };
  auth: AuthConfig;
}

/** A setting the process cannot run with; `message` is one line per problem, for a person. */
export class ConfigError extends StartupError {
  name = 'ConfigError';
}

/** The variables that say where `service` listens, for messages. */
export const listenVariables = (service: string) => ({
  host: `${service.toUpperCase()}_HOST`,
  port: `${service.toUpperCase()}_PORT`,
});

/**
 * The configuration in `source`: by default the process's environment over the working folder's
 * `.env`.
 */
export function loadConfig(source: NodeJS.ProcessEnv = processEnvironment()): Config {
  // Empty variables count as unset, so `FOO= npm start` falls back to the default.
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
  let env: Env;
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
  const accounts = [
    {
      email: env.AUTH_USER_EMAIL,
      password: env.AUTH_USER_PASSWORD,
      role: 'user' as const,
      variable: 'AUTH_USER_PASSWORD',
    },
    {
      email: env.AUTH_ADMIN_EMAIL,
      password: env.AUTH_ADMIN_PASSWORD,
      role: 'admin' as const,
      variable: 'AUTH_ADMIN_PASSWORD',
    },
  ];
  const services = [...new Set(env.SERVICES.split(',').map((name) => name.trim() as ServiceName))];
  // The accounts are the login service's: a process without it has no password to guard.
  if (production && services.includes('auth')) refuseWeakPasswords(accounts);
  // A create of the largest body spends up to twice its texts (with an Idempotency-Key, its kept
  // answer holds them again) and about a kilobyte more: a budget below that could never pay for it.
  const largestCreate = 2 * env.BODY_LIMIT_BYTES + 1024;
  if (env.NOTES_WRITE_BYTES_PER_MINUTE < largestCreate) {
    throw new ConfigError(
      `NOTES_WRITE_BYTES_PER_MINUTE=${env.NOTES_WRITE_BYTES_PER_MINUTE} is too small: a create of a body of BODY_LIMIT_BYTES=${env.BODY_LIMIT_BYTES} may spend ${largestCreate}, and would never be written; set it to at least that`,
    );
  }
  const listen = {
    notes8080: { host: env.NOTES8080_HOST, port: env.NOTES8080_PORT },
    notes8000: { host: env.NOTES8000_HOST, port: env.NOTES8000_PORT },
    auth: { host: env.AUTH_HOST, port: env.AUTH_PORT },
  };
  const metrics =
    env.METRICS_PORT === undefined ? undefined : { host: env.METRICS_HOST, port: env.METRICS_PORT };
  if (metrics && metrics.port !== 0) {
    const taken = services.find((name) => listen[name].port === metrics.port);
    if (taken)
      throw new ConfigError(
        `METRICS_PORT=${metrics.port} is ${listenVariables(taken).port}'s: the metrics need a port of their own`,
      );
  }
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
    logFormat: env.LOG_FORMAT as Config['logFormat'],
    database: {
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
    metrics,
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
    },
    auth: {
      production,
      accounts: accounts.map(({ email, password, role }) => ({ email, password, role })),
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

/**
 * Production mode refuses passwords anyone could guess: a documented default, a short one, the
 * account's own email.
 */
function refuseWeakPasswords(
  accounts: { email: string; password: string; variable: string }[],
): void {
  const lines = accounts.flatMap(({ email, password, variable }) => {
    if (DEFAULT_PASSWORDS.includes(password))
      return [
        `${variable} is a documented default password: production mode needs one of your own`,
      ];
    if (password.length < MIN_PRODUCTION_PASSWORD)
      return [
        `${variable} is shorter than ${MIN_PRODUCTION_PASSWORD} characters: production mode needs a longer password`,
      ];
    if (password.toLowerCase() === email.toLowerCase())
      return [`${variable} is the account's own email: production mode needs another password`];
    return [];
  });
  if (lines.length > 0) throw new ConfigError(lines.join('\n'));
}
