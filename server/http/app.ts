import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { bodyReader } from './body.js';
import type { Edge } from '../config.js';
import { docsRoutes } from './docs.js';
import { edgeCheck } from './edge.js';
import { HttpError, isClientGone, serviceUnavailable } from './errors.js';
import { requestLog, type Logger } from '../logger.js';
import type { Metrics } from './metrics.js';
import { openApiDocument, type Contract } from './openapi.js';
import { mount, route, type Route } from './route.js';
import { API_HEADERS } from './headers.js';
import type { Tracing } from './tracing.js';

/** What a service answers for a failure: its status, its body in the service's shape, headers. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What the process gives every service beside what the service itself needs. */
export interface Hosting {
  /** Whether the process is stopping: from then on `GET /ready` answers 503. */
  stopping?: () => boolean;
  /** Each request's duration (METRICS_PORT set). */
  metrics?: Metrics;
  /** Each request's span named after its route (OTEL_EXPORTER_OTLP_ENDPOINT set). */
  tracing?: Tracing;
}

export interface ServiceOptions extends Hosting {
  /** The service's name, in metrics, traces and log lines. */
  name: string;
  contract: Contract;
  routes: Route[];
  /** The service's words for every failure thrown while answering. */
  shape(error: unknown): ErrorAnswer;
  logger: Logger;
  /** Allowed hosts, trusted proxies, production mode. */
  edge: Edge;
  bodyLimitBytes: number;
  /** Headers of every answer of the service's API, beyond the security headers. */
  headers?: Record<string, string>;
  /** Tried when no route takes a request (the login service's files). */
  files?: Middleware;
  /** Resolves when the service can answer requests (its database answers). */
  ready?: () => Promise<unknown>;
  /** `/notes/` is redirected to `/notes`, as Starlette does. */
  redirectTrailingSlash?: boolean;
}

/** The header that names a request, for the client, the proxies in front and the log. */
const REQUEST_ID = 'X-Request-Id';
const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * A service's Koa app, every request through the same chain: its id, its trace and log line and
 * metrics, failures in the service's shape, the edge's checks, the security headers, then the
 * router (the service's routes, `/live`, `/ready`, its OpenAPI document and Swagger UI), and what
 * no route takes: files, a trailing slash, 405 or 404.
 */
export function serviceApp(service: ServiceOptions): Koa {
  const { name, logger, edge } = service;
  const routes = [...service.routes, liveRoute, readyRoute(service)];
  const document = openApiDocument({ ...service, routes });
  const router = new Router({ strict: true, sensitive: true });
  mount(
    router,
    [...routes, ...docsRoutes(service.contract.title, document, edge.production)],
    bodyReader({ limitBytes: service.bodyLimitBytes }),
  );

  const app = new Koa({ proxy: edge.trustProxy !== undefined });
  // Koa reports a body stream that fails both as the stream's error and as the response's.
  const reported = new WeakSet<object>();
  app.on('error', (error: unknown, ctx?: Context) => {
    if (reported.has(error as object)) return;
    reported.add(error as object);
    const line = {
      err: isClientGone(error) ? (error as Error).message : error,
      reqId: ctx?.state.requestId,
    };
    if (isClientGone(error)) logger.info(line, 'client went away during the answer');
    else logger.error(line, 'answer cut short');
  });
  app.use(async (ctx, next) => {
    const sent = ctx.get(REQUEST_ID);
    ctx.state.requestId = VALID_REQUEST_ID.test(sent) ? sent : randomUUID();
    ctx.set(REQUEST_ID, ctx.state.requestId);
    await next();
  });
  if (service.tracing) app.use(service.tracing.requests(name));
  app.use(requestLog(logger));
  if (service.metrics) app.use(service.metrics.requests(name));
  app.use(errors(service));
  const security = API_HEADERS(edge.production);
  app.use(async (ctx, next) => {
    ctx.set(security);
    try {
      await next();
    } finally {
      // The service's defaults, for the answers that set none of their own (files, pages do).
      for (const [name, value] of Object.entries(service.headers ?? {}))
        if (!ctx.response.get(name)) ctx.set(name, value);
    }
  });
  app.use(edgeCheck(edge));
  app.use(router.routes());
  app.use(router.allowedMethods());
  if (service.files) app.use(service.files);
  if (service.redirectTrailingSlash) app.use(trailingSlash(router));
  return app;
}

/**
 * Failures in the service's shape; a fault (not a refusal the service chose) logged with its stack.
 */
function errors({ shape, logger }: ServiceOptions): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // What no middleware answered: no route, or a route without this method (Allow is set).
      if (ctx.body == null && ctx.status >= 400) throw new HttpError(ctx.status);
    } catch (error) {
      const answer = shape(error);
      if (answer.status >= 500 && !(error instanceof HttpError)) {
        logger.error(
          { err: error, reqId: ctx.state.requestId, method: ctx.method, path: ctx.path },
          'request failed',
        );
      }
      ctx.status = answer.status;
      ctx.body = answer.body;
      if (answer.headers) ctx.set(answer.headers);
    }
  };
}

/** `GET /live`: 200 while the process serves, whatever its database. */
const liveRoute = route(
  'GET /live',
  {
    summary: 'Liveness',
    description: 'The process serves requests (whatever its database): for liveness probes.',
    responses: { 200: { description: 'Live', schema: statusSchema('Live', 'live') } },
  },
  (ctx) => {
    ctx.body = { status: 'live' };
  },
);

/**
 * `GET /ready`: 200 when the service can answer requests now; 503 in its own shape when its
 * database does not answer, and from the moment the process begins to stop.
 */
function readyRoute({ ready, stopping, contract, shape }: ServiceOptions): Route {
  return route(
    'GET /ready',
    {
      summary: 'Readiness',
      description:
        'Whether the service can answer requests now (its dependencies answer, and it is not stopping), for load balancers and readiness probes.',
      responses: {
        200: { description: 'Ready', schema: statusSchema('Ready', 'ready') },
        503: {
          description:
            'Not ready: a dependency (the database) does not answer, or the process is stopping',
          schema: contract.errorSchema,
          example: shape(serviceUnavailable('database unavailable')).body,
        },
      },
    },
    async (ctx) => {
      if (stopping?.()) throw serviceUnavailable('shutting down');
      await ready?.().catch(() => {
        throw serviceUnavailable('database unavailable');
      });
      ctx.body = { status: 'ready' };
    },
  );
}

function statusSchema(title: string, status: string) {
  return { type: 'object', title, properties: { status: { const: status } }, required: ['status'] };
}

/** A path with a trailing slash whose slash-less form is a route: redirected there (307). */
function trailingSlash(router: Router): Middleware {
  return async (ctx, next) => {
    const path = ctx.path.replace(/\/+$/, '');
    if (path === ctx.path || path === '' || router.match(path, ctx.method).path.length === 0)
      return next();
    ctx.status = 307;
    // Relative: the Host header is the client's to choose, the redirect must not be.
    ctx.set('Location', `${path}${ctx.search}`);
    ctx.body = '';
  };
}
