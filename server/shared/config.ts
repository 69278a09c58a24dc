import path from 'node:path';
import * as yup from 'yup';

/**
 * Every environment variable the project reads, parsed and validated here and nowhere else.
 * The README's configuration table lists the same variables with the same defaults.
 */

const port = (fallback: number) => yup.number().integer().min(0).max(65535).default(fallback);
const positiveInt = (fallback: number) => yup.number().integer().min(1).default(fallback);
const byteSize = (fallback: number) => yup.number().integer().min(1).default(fallback);

function isPostgresUrl(value: string): boolean {
  try {
    return ['postgres:', 'postgresql:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

const envSchema = yup.object({
  NODE_ENV: yup.string().oneOf(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: yup
    .string()
    .oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info'),

  // yup's url() knows only http(s) and ftp: a connection string is checked by its own scheme.
  DATABASE_URL: yup
    .string()
    .optional()
    .test('postgres-url', '${path} must be a postgres:// or postgresql:// URL', (value) => value === undefined || isPostgresUrl(value)),
  DATA_DIR: yup.string().default('.data'),
  DB_POOL_MAX: positiveInt(10),
  /**
   * Longest a request waits for a pooled connection, and then for its query, before it answers
   * 500: twice this bounds a request when the database stops answering.
   */
  DB_TIMEOUT_MS: positiveInt(2000),
  /** How long start-up keeps retrying an unreachable database before giving up. */
  DB_STARTUP_RETRY_MS: yup.number().integer().min(0).default(30000),

  NOTES8080_HOST: yup.string().default('0.0.0.0'),
  NOTES8080_PORT: port(8080),
  NOTES8000_HOST: yup.string().default('127.0.0.1'),
  NOTES8000_PORT: port(8000),
  /** `vite`: pages served by Vite's dev server with hot reload (`npm run dev`); `built`: the Vite build. */
  SPA_MODE: yup.string().oneOf(['built', 'vite']).default('built'),
  AUTH_HOST: yup.string().default('0.0.0.0'),
  AUTH_PORT: port(3000),

  /** Largest accepted request body for the notes services, in bytes (1 MiB). */
  BODY_LIMIT_BYTES: byteSize(1024 * 1024),

  AUTH_USER_EMAIL: yup.string().email().default('user@example.com'),
  AUTH_USER_PASSWORD: yup.string().min(1).default('user-password'),
  AUTH_ADMIN_EMAIL: yup.string().email().default('admin@example.com'),
  AUTH_ADMIN_PASSWORD: yup.string().min(1).default('admin-password'),
  SESSION_TTL_SECONDS: positiveInt(3600),
  SESSION_MAX: positiveInt(100_000),
  /** scrypt cost parameter N (a power of two); turned down only by tests and benchmarks. */
  PASSWORD_HASH_COST: positiveInt(16384),
});

type Env = yup.InferType<typeof envSchema>;

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

export interface AuthConfig {
  listen: Listen;
  production: boolean;
  accounts: { email: string; password: string; role: 'user' | 'admin' }[];
  usingDefaultPasswords: boolean;
  sessionTtlSeconds: number;
  sessionMax: number;
  passwordHashCost: number;
}

export interface Config {
  logLevel: Env['LOG_LEVEL'];
  database: DatabaseConfig;
  bodyLimitBytes: number;
  spaMode: Env['SPA_MODE'];
  notes8080: Listen;
  notes8000: Listen;
  auth: AuthConfig;
}

export class ConfigError extends Error {}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  let env: Env;
  try {
    // Empty variables count as unset, so `FOO= npm start` falls back to the default.
    const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
    env = envSchema.validateSync(present, { abortEarly: false, stripUnknown: true });
  } catch (error) {
    if (error instanceof yup.ValidationError) {
      throw new ConfigError(`Invalid configuration: ${error.errors.join('; ')}`);
    }
    throw error;
  }

  const production = env.NODE_ENV === 'production';
  const defaults = envSchema.getDefault();
  return {
    logLevel: env.LOG_LEVEL,
    database: {
      url: env.DATABASE_URL,
      dataDir: path.resolve(env.DATA_DIR),
      poolMax: env.DB_POOL_MAX,
      timeoutMs: env.DB_TIMEOUT_MS,
      startupRetryMs: env.DB_STARTUP_RETRY_MS,
    },
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    spaMode: env.SPA_MODE,
    notes8080: { host: env.NOTES8080_HOST, port: env.NOTES8080_PORT },
    notes8000: { host: env.NOTES8000_HOST, port: env.NOTES8000_PORT },
    auth: {
      listen: { host: env.AUTH_HOST, port: env.AUTH_PORT },
      production,
      accounts: [
        { email: env.AUTH_USER_EMAIL, password: env.AUTH_USER_PASSWORD, role: 'user' },
        { email: env.AUTH_ADMIN_EMAIL, password: env.AUTH_ADMIN_PASSWORD, role: 'admin' },
      ],
      usingDefaultPasswords:
        env.AUTH_USER_PASSWORD === defaults.AUTH_USER_PASSWORD ||
        env.AUTH_ADMIN_PASSWORD === defaults.AUTH_ADMIN_PASSWORD,
      sessionTtlSeconds: env.SESSION_TTL_SECONDS,
      sessionMax: env.SESSION_MAX,
      passwordHashCost: env.PASSWORD_HASH_COST,
    },
  };
}
