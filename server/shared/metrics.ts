import Koa from 'koa';
import client from 'prom-client';
import type { PoolConnections } from './database.js';
import type { Logger } from './logger.js';
import { RequestDurations } from './requestDurations.js';
import { ROUTE_LABELS, type RequestWatch } from './requestWatch.js';

/**
 * The process's metrics in Prometheus's text format (prom-client), made only when METRICS_PORT is
 * set: the process's own (CPU, memory, event loop, garbage collection), each request's duration
 * by service, method, route and status, each pool's connections, and what the services keep (the
 * bytes stored against NOTES_MAX_BYTES, live sessions, login attempts by outcome). What a gauge
 * reads is read when Prometheus asks, by the gauge's `collect`: no timer runs between scrapes.
 */

/** How a login attempt ended, as the audit trail records it. */
export type LoginOutcome = 'succeeded' | 'failed' | 'throttled' | 'busy';
const LOGIN_OUTCOMES: LoginOutcome[] = ['succeeded', 'failed', 'throttled', 'busy'];

/** What a service reports of what it keeps. */
export interface Measures {
  /** The bytes the service stores against its cap (`maxBytes`), read at each scrape. */
  storage(storedBytes: () => Promise<number>, maxBytes: number): void;
  /**
   * The live sessions of the login service's store (`memory` or `postgres`), counted at each
   * scrape.
   */
  sessions(store: string, count: () => Promise<number>): void;
  /** The counter of login attempts: called once per attempt with how it ended. */
  loginAttempts(): (outcome: LoginOutcome) => void;
}

/** The text Prometheus reads, and its content type. */
export interface Scrape {
  contentType: string;
  text(): Promise<string>;
}

export class Metrics {
  readonly registry = new client.Registry();
  readonly #durations = new RequestDurations();
  readonly #pools = new Map<string, () => PoolConnections>();
  readonly #stored = new Map<string, () => Promise<number>>();
  readonly #sessions = new Map<string, () => Promise<number>>();
  // The gauges and counter of what services keep, made when the first service reports it.
  #maxBytes?: client.Gauge<'service'>;
  #sessionsGauge = false;
  #logins?: client.Counter<'outcome'>;

  constructor(private readonly logger: Logger) {
    client.collectDefaultMetrics({ register: this.registry });
    // Read through `get()`, as the registry reads every metric (see requestDurations.ts).
    this.registry.registerMetric(this.#durations as unknown as client.Metric);
    const pools = this.#pools;
    new client.Gauge({
      name: 'db_pool_connections',
      help: "Connections of each service's database pool: open (total), idle among them, and requests waiting for one",
      labelNames: ['service', 'state'],
      registers: [this.registry],
      collect() {
        for (const [service, connections] of pools) {
          const { total, idle, waiting } = connections();
          this.set({ service, state: 'total' }, total);
          this.set({ service, state: 'idle' }, idle);
          this.set({ service, state: 'waiting' }, waiting);
        }
      },
    });
  }

  /** `service`'s pool, whose connections are read at each scrape. */
  pool(service: string, connections: () => PoolConnections): void {
    this.#pools.set(service, connections);
  }

  /** What watches `service`'s requests: the duration of each, by its route, method and status. */
  requests(service: string): RequestWatch {
    const observe = this.#durations.of(service);
    return {
      routed(ctx, route) {
        ctx.state.route = route;
      },
      answered(ctx, startedMs) {
        observe(
          ctx.state.route ?? ROUTE_LABELS.unmatched,
          ctx.method,
          ctx.status,
          (performance.now() - startedMs) / 1000,
        );
      },
    };
  }

  /** Where `service` reports what it keeps. */
  measures(service: string): Measures {
    return {
      storage: (storedBytes, maxBytes) => {
        this.#maxBytes ??= this.#storageGauges();
        this.#maxBytes.set({ service }, maxBytes);
        this.#stored.set(service, storedBytes);
      },
      sessions: (store, count) => {
        if (!this.#sessionsGauge) this.#makeSessionsGauge();
        this.#sessionsGauge = true;
        this.#sessions.set(store, count);
      },
      loginAttempts: () => {
        const counter = (this.#logins ??= new client.Counter({
          name: 'auth_login_attempts_total',
          help: 'Login attempts by how they ended: succeeded, failed (password check), throttled (a limit refused it first), busy (too many password checks waiting)',
          labelNames: ['outcome'],
          registers: [this.registry],
        }));
        // Every outcome is shown from the start, at 0 until it happens.
        const counted = new Map(
          LOGIN_OUTCOMES.map((outcome) => [outcome, counter.labels({ outcome })]),
        );
        for (const child of counted.values()) child.inc(0);
        return (outcome) => counted.get(outcome)!.inc();
      },
    };
  }

  /** The text of this process's metrics. */
  scrape(): Scrape {
    return { contentType: this.registry.contentType, text: () => this.registry.metrics() };
  }

  /**
   * In a cluster worker: the primary's scrapes are answered with this process's metrics, over the
   * IPC channel.
   */
  answerPrimary(): void {
    client.AggregatorRegistry.setRegistries(this.registry);
    // Its construction is what listens for the primary's requests.
    new client.AggregatorRegistry();
  }

  /** The gauges of the bytes stored, read at each scrape, and of the caps (returned). */
  #storageGauges(): client.Gauge<'service'> {
    const stored = this.#stored;
    const logger = this.logger;
    new client.Gauge({
      name: 'notes_stored_bytes',
      help: 'Bytes each notes service stores, as it counts them against NOTES_MAX_BYTES (its notes and its kept idempotent answers)',
      labelNames: ['service'],
      // The count is the database's: every worker reads the same.
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        this.reset();
        await Promise.all(
          [...stored].map(async ([service, read]) => {
            try {
              this.set({ service }, await read());
            } catch (error) {
              logger.warn(
                { err: (error as Error).message, service },
                'stored bytes not read for the metrics',
              );
            }
          }),
        );
      },
    });
    return new client.Gauge({
      name: 'notes_max_bytes',
      help: 'The most bytes each notes service stores (NOTES_MAX_BYTES)',
      labelNames: ['service'],
      aggregator: 'max',
      registers: [this.registry],
    });
  }

  #makeSessionsGauge(): void {
    const sessions = this.#sessions;
    const logger = this.logger;
    new client.Gauge({
      name: 'auth_sessions',
      help: "Live sessions in the login service's store",
      labelNames: ['store'],
      // A store in PostgreSQL is every worker's: each counts the same sessions.
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [store, count] of sessions) {
          try {
            this.set({ store }, await count());
          } catch (error) {
            logger.warn(
              { err: (error as Error).message, store },
              'sessions not counted for the metrics',
            );
          }
        }
      },
    });
  }
}

/**
 * In a cluster's primary: the sum of every worker's metrics (each metric added up, or its largest
 * value where each worker reads the same).
 */
export function workersScrape(): Scrape {
  const aggregator = new client.AggregatorRegistry();
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}

/**
 * Answers `GET /metrics` with the scrape's text; anything else 404. Scrapes that come while one is
 * being gathered get its text: a flood of them gathers (and asks the database for the counts)
 * once at a time, never once each, so it cannot take the services' pool connections.
 */
export function metricsApp(scrape: Scrape, logger: Logger): Koa {
  const app = new Koa();
  let gathering: Promise<string> | undefined;
  const gathered = () =>
    (gathering ??= scrape.text().finally(() => {
      gathering = undefined;
    }));
  app.use(async (ctx) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return;
    try {
      ctx.body = await gathered();
      ctx.set('content-type', scrape.contentType);
    } catch (error) {
      logger.error({ err: error }, 'metrics could not be gathered');
      ctx.status = 500;
      ctx.body = 'metrics could not be gathered\n';
    }
  });
  return app;
}
