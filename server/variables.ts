import proxyaddr from 'proxy-addr';
import * as yup from 'yup';

// Every variable the project reads, with its rule and default; docs/configuration.md says what
// they mean (a test keeps the two in step). Each rule's message says what is expected.

const count = (least: number) => {
  const expected = `a whole number, at least ${least}`;
  return yup.number().typeError(expected).integer(expected).min(least, expected);
};
const wholeNumber = (least: number, fallback: number) => count(least).default(fallback);
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
const checked = (expected: string, valid: (value: string) => boolean) =>
  yup
    .string()
    .optional()
    .test('valid', expected, (value) => value === undefined || valid(value));
const url =
  (...protocols: string[]) =>
  (value: string) =>
    URL.canParse(value) && protocols.includes(new URL(value).protocol);
const hostList = () =>
  checked('host names separated by commas (with or without a port), or *', (value) =>
    value.split(',').every((host) => host.trim() !== ''),
  );

export const SERVICE_NAMES = ['notes8080', 'notes8000', 'auth'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** TRUST_PROXY read: hops, or addresses and subnets (checked by proxy-addr, which uses them). */
export function trustProxyOf(value: string): number | string[] | undefined {
  if (/^\d+$/.test(value)) return Number(value) >= 1 ? Number(value) : undefined;
  const entries = value.split(',').map((entry) => entry.trim());
  try {
    proxyaddr.compile(entries);
    return entries;
  } catch {
    return undefined;
  }
}

export const envSchema = yup.object({
  NODE_ENV: oneOf(['development', 'production', 'test'], 'development'),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  LOG_FORMAT: yup
    .string()
    .oneOf(['pretty', 'json'] as const, 'one of pretty, json')
    .optional(),

  DATABASE_URL: checked('a postgres:// or postgresql:// URL', url('postgres:', 'postgresql:')),
  DATA_DIR: yup.string().default('.data'),
  DB_POOL_MAX: wholeNumber(1, 10),
  DB_TIMEOUT_MS: wholeNumber(1, 2000),
  DB_STARTUP_RETRY_MS: wholeNumber(0, 30000),

  NOTES8080_HOST: yup.string().default('0.0.0.0'),
  NOTES8080_PORT: port(8080),
  NOTES8000_HOST: yup.string().default('127.0.0.1'),
  NOTES8000_PORT: port(8000),
  AUTH_HOST: yup.string().default('0.0.0.0'),
  AUTH_PORT: port(3000),
  NOTES8080_ALLOWED_HOSTS: hostList(),
  NOTES8000_ALLOWED_HOSTS: hostList(),
  AUTH_ALLOWED_HOSTS: hostList(),
  TRUST_PROXY: checked(
    'a number of hops, or addresses and subnets separated by commas',
    (value) => trustProxyOf(value) !== undefined,
  ),
  SPA_MODE: oneOf(['built', 'prebuilt', 'vite'], 'built'),
  VITE_PORT: port(5173),

  MAX_CONNECTIONS: count(1).optional(),
  CLIENT_IDLE_TIMEOUT_MS: wholeNumber(1000, 30_000),
  HEADERS_TIMEOUT_MS: wholeNumber(1000, 10_000),
  SHUTDOWN_DRAIN_MS: wholeNumber(0, 0).max(60_000, 'a whole number from 0 to 60000'),

  BODY_LIMIT_BYTES: wholeNumber(1, 1024 * 1024),
  NOTES_MAX_BYTES: wholeNumber(1, 1024 ** 3),
  IDEMPOTENCY_TTL_SECONDS: wholeNumber(1, 24 * 3600),
  NOTES_WRITE_BYTES_PER_MINUTE: wholeNumber(1, 32 * 1024 ** 2),

  AUTH_USER_EMAIL: email('user@example.com'),
  AUTH_USER_PASSWORD: yup.string().default('user-password'),
  AUTH_ADMIN_EMAIL: email('admin@example.com'),
  AUTH_ADMIN_PASSWORD: yup.string().default('admin-password'),
  SESSION_TTL_SECONDS: wholeNumber(1, 3600),
  SESSION_MAX: wholeNumber(1, 100_000),
  SESSION_MAX_PER_USER: wholeNumber(1, 20),
  SESSION_STORE: oneOf(['memory', 'postgres'] as const, 'memory'),
  SESSION_SWEEP_INTERVAL_MS: wholeNumber(100, 60_000),
  SERVICES: yup
    .string()
    .default(SERVICE_NAMES.join(','))
    .test('services', `names among ${SERVICE_NAMES.join(', ')}, separated by commas`, (value) =>
      value.split(',').every((name) => (SERVICE_NAMES as readonly string[]).includes(name.trim())),
    ),
  DEVICE_TRUST_DAYS: wholeNumber(1, 90),
  AUDIT_RETENTION_DAYS: wholeNumber(1, 30),
  AUDIT_MAX_EVENTS: wholeNumber(1, 100_000),
  METRICS_PORT: portNumber().optional(),
  METRICS_HOST: yup.string().default('127.0.0.1'),
  OTEL_EXPORTER_OTLP_ENDPOINT: checked('an http:// or https:// URL', url('http:', 'https:')),
  OTEL_SERVICE_NAME: yup.string().optional(),
  PASSWORD_HASH_COST: wholeNumber(2, 16384).test(
    'power-of-two',
    'a power of two',
    (value) => (value & (value - 1)) === 0,
  ),
});

/** The name of every environment variable the project reads. */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(envSchema.fields);
