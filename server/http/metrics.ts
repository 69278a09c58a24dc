import Koa, { type Middleware } from 'koa';
import client from 'prom-client';
import type { Logger } from '../logger.js';

type Labels = Record<string, string>;
type Reading = { labels: Labels; read: () => number | Promise<number> };

/** The process's metrics, made only when METRICS_PORT is set; gauges read at each scrape. */
export class Metrics {
  readonly registry = new client.Registry();
  readonly #durations = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests by service, method, route (its path template) and status',
    labelNames: ['service', 'method', 'route', 'status'],
    // From a note read on a warm pool to past twice DB_TIMEOUT_MS's default.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly #readings = new Map<string, Reading[]>();

  constructor(private readonly logger: Logger) {
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** Each request's duration, by the route that took it (none: unmatched). */
  requests(service: string): Middleware {
    return async (ctx, next) => {
      const end = this.#durations.startTimer({ service, method: ctx.method });
      try {
        await next();
      } finally {
        end({ route: ctx.routerName ?? 'unmatched', status: String(ctx.status) });
      }
    };
  }

  pool(service: string, connections: () => { total: number; idle: number; waiting: number }) {
    const help =
      "Connections of each service's database pool: open (total), idle among them, " +
      'and requests waiting for one';
    for (const state of ['total', 'idle', 'waiting'] as const)
      this.#gauge('db_pool_connections', help, { service, state }, () => connections()[state]);
  }

  storage(service: string, stored: () => Promise<number>, maxBytes: number) {
    const help = 'Bytes each notes service stores, as it counts them against NOTES_MAX_BYTES';
    this.#gauge('notes_stored_bytes', help, { service }, stored);
    const max = 'The most bytes each notes service stores (NOTES_MAX_BYTES)';
    this.#gauge('notes_max_bytes', max, { service }, () => maxBytes);
  }

  sessions(store: string, count: () => Promise<number>) {
    this.#gauge('auth_sessions', "Live sessions in the login service's store", { store }, count);
  }

  /** The counter of login attempts by outcome, each shown from the start at 0. */
  loginAttempts<T extends string>(outcomes: readonly T[]): (outcome: T) => void {
    const counter = new client.Counter({
      name: 'auth_login_attempts_total',
      help:
        'Login attempts by how they ended: succeeded, failed (password check), ' +
        'throttled (a limit refused it, or its address had too many checks waiting)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    for (const outcome of outcomes) counter.inc({ outcome }, 0);
    return (outcome) => counter.inc({ outcome });
  }

  /** Reads `read` into the gauge `name` at each scrape, under `labels`; the gauge is made once. */
  #gauge(name: string, help: string, labels: Labels, read: Reading['read']): void {
    const known = this.#readings.get(name);
    if (known) return void known.push({ labels, read });
    const readings: Reading[] = [{ labels, read }];
    this.#readings.set(name, readings);
    const { logger } = this;
    new client.Gauge({
      name,
      help,
      labelNames: Object.keys(labels),
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const reading of readings) {
          try {
            this.set(reading.labels, await reading.read());
          } catch (error) {
            const { message } = error as Error;
            logger.warn({ err: message, metric: name, labels: reading.labels }, 'metric not read');
          }
        }
      },
    });
  }

  /** `GET /metrics`; scrapes that come while one is gathered get its text (one count at a time). */
  app(): Koa {
    const app = new Koa();
    let gathering: Promise<string> | undefined;
    app.use(async (ctx) => {
      if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return;
      try {
        ctx.body = await (gathering ??= this.registry
          .metrics()
          .finally(() => (gathering = undefined)));
        ctx.type = this.registry.contentType;
      } catch (error) {
        this.logger.error({ err: error }, 'metrics could not be gathered');
        ctx.status = 500;
        ctx.body = 'metrics could not be gathered\n';
      }
    });
    return app;
  }
}
