import Koa, { type Middleware } from 'koa';
import client from 'prom-client';
import type { Logger } from '../logger.js';

type Reading = () => Promise<[Record<string, string>, number][]>;

/**
 * The process's metrics in Prometheus's text format (prom-client), made only when METRICS_PORT is
 * set: the process's own (CPU, memory, event loop, garbage collection), each request's duration
 * by service, method, route and status, each pool's connections, and what the services keep (the
 * bytes stored against NOTES_MAX_BYTES, live sessions, login attempts by outcome). A gauge reads
 * its value when Prometheus asks (its `collect`): no timer runs between scrapes.
 */
export class Metrics {
  readonly registry = new client.Registry();
  readonly #durations = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests by service, method, route (its path template) and status',
    labelNames: ['service', 'method', 'route', 'status'],
    // From half a millisecond (a note read on a warm pool) to past twice DB_TIMEOUT_MS's default.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(private readonly logger: Logger) {
    client.collectDefaultMetrics({ register: this.registry });
  }

  /** Middleware measuring each request of `service` by the route that took it (none: unmatched). */
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

  /** `service`'s pool: its connections, read at each scrape. */
  pool(service: string, connections: () => { total: number; idle: number; waiting: number }) {
    this.#gauge(
      'db_pool_connections',
      "Connections of each service's database pool: open (total), idle among them, and requests waiting for one",
      ['service', 'state'],
    ).set(service, async () =>
      Object.entries(connections()).map(([state, value]) => [{ service, state }, value]),
    );
  }

  /** The bytes `service` stores against its cap, read at each scrape, and the cap. */
  storage(service: string, stored: () => Promise<number>, maxBytes: number) {
    this.#gauge(
      'notes_stored_bytes',
      'Bytes each notes service stores, as it counts them against NOTES_MAX_BYTES',
      ['service'],
    ).set(service, async () => [[{ service }, await stored()]]);
    this.#gauge('notes_max_bytes', 'The most bytes each notes service stores (NOTES_MAX_BYTES)', [
      'service',
    ]).set(service, async () => [[{ service }, maxBytes]]);
  }

  /** The live sessions of the login service's store, counted at each scrape. */
  sessions(store: string, count: () => Promise<number>) {
    this.#gauge('auth_sessions', "Live sessions in the login service's store", ['store']).set(
      store,
      async () => [[{ store }, await count()]],
    );
  }

  /** The counter of login attempts by outcome, each shown from the start at 0. */
  loginAttempts<T extends string>(outcomes: readonly T[]): (outcome: T) => void {
    const counter = new client.Counter({
      name: 'auth_login_attempts_total',
      help: 'Login attempts by how they ended: succeeded, failed (password check), throttled (a limit refused it, or its address had too many checks waiting)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    for (const outcome of outcomes) counter.inc({ outcome }, 0);
    return (outcome) => counter.inc({ outcome });
  }

  /** The readings of a gauge, made at its first reading: each gives its labelled values. */
  readonly #gauges = new Map<string, Map<string, Reading>>();
  #gauge(name: string, help: string, labelNames: string[]): Map<string, Reading> {
    const known = this.#gauges.get(name);
    if (known) return known;
    const all = new Map<string, Reading>();
    this.#gauges.set(name, all);
    const { logger } = this;
    new client.Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [key, read] of all) {
          try {
            for (const [labels, value] of await read()) this.set(labels, value);
          } catch (error) {
            logger.warn({ err: (error as Error).message, metric: name, key }, 'metric not read');
          }
        }
      },
    });
    return all;
  }

  /**
   * Answers `GET /metrics`; anything else 404. Scrapes that come while one is being gathered get
   * its text: a flood of them asks the database for the counts once at a time, never once each.
   */
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
