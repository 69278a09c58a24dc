import path from 'node:path';
import proxyaddr from 'proxy-addr';
import * as yup from 'yup';
import { processEnvironment } from './environment.js';
import { StartupError } from './http/errors.js';

/**
 * Every environment variable the project reads, parsed and validated here and nowhere else.
 * docs/configuration.md lists the same variables with the same defaults (a test checks it). Each
 * rule's message says what is expected, so that a bad value gets one readable line.
 */

const wholeNumber = (least: number, fallback: number) => {
  const expected = `a whole number, at least ${least}`;
  return yup.number().typeError(expected).integer(expected).min(least, expected).default(fallback);
};
const portNumber = () => {
  const expected = 'a port number from 0 to 65535';
  return yup.number().typeError(expected).integer(expected).min(0, expected).max(65535, expected);
};
const port = (fallback: number) => portNumber().default(fallback);
const oneOf = <T extends string>(values: readonly T[], fallback: T) =>
  yup
    .string()
    .oneOf(values, `one of ${values.join(', ')}`)
    .default(fallback);
const email = (fallback: string) => yup.string().email('an email address').default(fallback);

export const SERVICE_NAMES = ['notes8080', 'notes8000', 'auth'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const hostList = () =>
  yup
    .string()
    .optional()
    .test(
      'hosts',
      'host names separated by commas (with or without a port), or *',
      (value) => value === undefined || value.split(',').every((host) => host.trim() !== ''),
    );

/** TRUST_PROXY read: hops, or addresses and subnets (checked by proxy-addr, which uses them). */
function trustProxyOf(value: string): number | string[] | undefined {
  if (/^\d+$/.test(value)) return Number(value) >= 1 ? Number(value) : undefined;
  const entries = value.split(',').map((entry) => entry.trim());
  try {
    proxyaddr.compile(entries);
    return entries;
  } catch {
    return undefined;
  }
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
const isLoopback = (host: string) =>
  host === 'localhost' || host === '::1' || host.startsWith('127.');

/** The documented default passwords: none of them may be an account's password in production. */
const DEFAULT_PASSWORDS = ['user-password', 'admin-password'];
const MIN_PRODUCTION_PASSWORD = 12;

const hasProtocol = (value: string, protocols: string[]) => {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
};
const isPostgresUrl = (value: string) => hasProtocol(value, ['postgres:', 'postgresql:']);
const isHttpUrl = (value: string) => hasProtocol(value, ['http:', 'https:']);

const envSchema = yup.object({
  NODE_ENV: oneOf(['development', 'production', 'test'], 'development'),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  /**
   * `pretty`: readable lines; `json`: one JSON object per line. Unset: pretty at a terminal, JSON
   * otherwise.
   */
  LOG_FORMAT: yup.string().oneOf(['pretty', 'json'], 'one of pretty, json').optional(),

  // yup's url() knows only http(s) and ftp: a connection string is checked by its own scheme.
  DATABASE_URL: yup
    .string()
    .optional()
    .test(
      'postgres-url',
      'a postgres:// or postgresql:// URL',
      (value) => value === undefined || isPostgresUrl(value),
    ),
  DATA_DIR: yup.string().default('.data'),
  DB_POOL_MAX: wholeNumber(1, 10),
  /**
   * Longest a request waits for a pooled connection, and then for its query, before it answers
   * 500: twice this bounds a request when the database stops answering.
   */
  DB_TIMEOUT_MS: wholeNumber(1, 2000),
  /** How long start-up keeps retrying a database that refuses connections before giving up. */
  DB_STARTUP_RETRY_MS: wholeNumber(0, 30000),

  NOTES8080_HOST: yup.string().default('0.0.0.0'),
  NOTES8080_PORT: port(8080),
  NOTES8000_HOST: yup.string().default('127.0.0.1'),
  NOTES8000_PORT: port(8000),
  AUTH_HOST: yup.string().default('0.0.0.0'),
  AUTH_PORT: port(3000),
  /** Host names each service answers (`*`: any); a request naming another Host answers 400. */
  NOTES8080_ALLOWED_HOSTS: hostList(),
  NOTES8000_ALLOWED_HOSTS: hostList(),
  AUTH_ALLOWED_HOSTS: hostList(),
  /**
   * Proxies in front whose forwarding headers are believed: a number of hops, or the proxies'
   * addresses and subnets. Unset: none; the client is the connection's peer.
   */
  TRUST_PROXY: yup
    .string()
    .optional()
    .test(
      'trust-proxy',
      'a number of hops, or addresses and subnets separated by commas',
      (value) => value === undefined || trustProxyOf(value) !== undefined,
    ),
  /**
   * `built`: the Vite build, made first when it is missing or older than its sources; `prebuilt`:
   * the Vite build as it is (an image that ships it without its sources); `vite`: pages whose
   * modules come from Vite's dev server on VITE_PORT, with hot reload (`npm run dev` runs it).
   */
  SPA_MODE: oneOf(['built', 'prebuilt', 'vite'], 'built'),
  /** Vite's dev server in `npm run dev`: the pages' modules and the hot-reload socket. */
  VITE_PORT: port(5173),

  /**
   * Open connections each service keeps at most; unset: the open-files limit, less a reserve,
   * shared by the services.
   */
  MAX_CONNECTIONS: yup
    .number()
    .typeError('a whole number, at least 1')
    .integer('a whole number, at least 1')
    .min(1, 'a whole number, at least 1')
    .optional(),
  /**
   * A connection on which no byte moves for this long is closed (a client that stopped reading an
   * answer, say).
   */
  CLIENT_IDLE_TIMEOUT_MS: wholeNumber(1000, 30_000),
  /** Time a client has to send a request's headers, from its connection or the previous answer. */
  HEADERS_TIMEOUT_MS: wholeNumber(1000, 10_000),
  /**
   * How long a stopping process keeps serving, `GET /ready` already answering 503, before it stops
   * accepting connections: the time a balancer takes to notice. 0 (a person's Ctrl-C): at once.
   */
  SHUTDOWN_DRAIN_MS: wholeNumber(0, 0).max(60_000, 'a whole number from 0 to 60000'),

  /** Largest accepted request body for the notes services, in bytes (1 MiB). */
  BODY_LIMIT_BYTES: wholeNumber(1, 1024 * 1024),
  /**
   * Most bytes of text each notes service stores (its notes, and the answers kept for idempotency
   * keys): 1 GiB.
   */
  NOTES_MAX_BYTES: wholeNumber(1, 1024 ** 3),
  /** How long a notes service remembers an Idempotency-Key and its answer. */
  IDEMPOTENCY_TTL_SECONDS: wholeNumber(1, 24 * 3600),
  /**
   * Bytes one client address may add to a notes service's storage count per minute (32 MiB); see
   * WriteBudget.
   */
  NOTES_WRITE_BYTES_PER_MINUTE: wholeNumber(1, 32 * 1024 ** 2),

  AUTH_USER_EMAIL: email('user@example.com'),
  AUTH_USER_PASSWORD: yup.string().default('user-password'),
  AUTH_ADMIN_EMAIL: email('admin@example.com'),
  AUTH_ADMIN_PASSWORD: yup.string().default('admin-password'),
  SESSION_TTL_SECONDS: wholeNumber(1, 3600),
  SESSION_MAX: wholeNumber(1, 100_000),
  SESSION_MAX_PER_USER: wholeNumber(1, 20),
  /**
   * `memory`: sessions in this process (the spec's table; a restart ends them); `postgres`: shared
   * by every instance.
   */
  SESSION_STORE: oneOf(['memory', 'postgres'] as const, 'memory'),
  /** How often expired sessions are deleted from PostgreSQL (SESSION_STORE=postgres). */
  SESSION_SWEEP_INTERVAL_MS: wholeNumber(100, 60_000),
  /** The services this process runs, separated by commas (each can then be scaled on its own). */
  SERVICES: yup
    .string()
    .default(SERVICE_NAMES.join(','))
    .test('services', `names among ${SERVICE_NAMES.join(', ')}, separated by commas`, (value) =>
      value.split(',').every((name) => (SERVICE_NAMES as readonly string[]).includes(name.trim())),
    ),
  /**
   * How long a device cookie vouches for its browser: its Max-Age, and the age past which the
   * server ignores it.
   */
  DEVICE_TRUST_DAYS: wholeNumber(1, 90),
  /** How long the login service keeps a security event of its audit trail, in days. */
  AUDIT_RETENTION_DAYS: wholeNumber(1, 30),
  /** The most security events the login service keeps; past it the oldest go. */
  AUDIT_MAX_EVENTS: wholeNumber(1, 100_000),
  /**
   * Where Prometheus reads the metrics (GET /metrics); unset: no metrics server, and nothing is
   * measured.
   */
  METRICS_PORT: portNumber().optional(),
  METRICS_HOST: yup.string().default('127.0.0.1'),
  /** Where traces are sent over OTLP; unset: no traces, and the OpenTelemetry SDK is not loaded. */
  OTEL_EXPORTER_OTLP_ENDPOINT: yup
    .string()
    .optional()
    .test(
      'http-url',
      'an http:// or https:// URL',
      (value) => value === undefined || isHttpUrl(value),
    ),
  /** The traces' service name; unset: the names of the services this process runs. */
  OTEL_SERVICE_NAME: yup.string().optional(),
  /** scrypt cost parameter N (a power of two); turned down only by tests and benchmarks. */
  PASSWORD_HASH_COST: wholeNumber(2, 16384).test(
    'power-of-two',
    'a power of two',
    (value) => (value & (value - 1)) === 0,
  ),
});

/** The name of every environment variable this module reads, from its schema. */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(envSchema.fields);

type Env = yup.InferType<typeof envSchema>;

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
