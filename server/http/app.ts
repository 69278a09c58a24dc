import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import proxyaddr from 'proxy-addr';
import type { Edge } from '../config.js';
import type { Logger } from '../logger.js';
import { bodyReader } from './body.js';
import { docsRoutes } from './docs.js';
import { httpError, HttpError, INVALID_HOST, isClientGone } from './errors.js';
import { API_HEADERS } from './headers.js';
import type { Metrics } from './metrics.js';
import { openApiDocument, type Contract } from './openapi.js';
import { mount, route, type Route } from './route.js';
import type { Tracing } from './tracing.js';

/** A failure in the service's words. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** What the process gives every service. */
export interface Hosting {
  stopping?: () => boolean;
  metrics?: Metrics;
  tracing?: Tracing;
}

export interface ServiceOptions extends Hosting {
  name: string;
  contract: Contract;
  routes: Route[];
  shape(error: unknown): ErrorAnswer;
  logger: Logger;
  edge: Edge;
  bodyLimitBytes: number;
  /** Headers of every answer that sets none of its own, beyond the security headers. */
  headers?: Record<string, string>;
  /** Tried when no route takes a request (the login service's files). */
  files?: Middleware;
  ready?: () => Promise<unknown>;
  redirectTrailingSlash?: boolean;
}

export function serviceApp(service: ServiceOptions): Koa {
  const { name, logger, edge } = service;
  const routes = [...service.routes, liveRoute, readyRoute(service)];
  const document = openApiDocument({ ...service, routes });
  const router = new Router({ strict: true, sensitive: true });
  const docs = docsRoutes(service.contract.title, document, edge.production);
  mount(router, [...routes, ...docs], bodyReader(service.bodyLimitBytes));

  const app = new Koa({ proxy: edge.trustProxy !== undefined });
  // Koa reports a body stream that fails both as the stream's error and as the response's.
  const reported = new WeakSet<object>();
  app.on('error', (error: Error, ctx?: Context) => {
    if (reported.has(error)) return;
    reported.add(error);
    const reqId = ctx?.state.requestId;
    if (!isClientGone(error)) logger.error({ err: error, reqId }, 'answer cut short');
    else logger.info({ err: error.message, reqId }, 'client went away during the answer');
  });
  app.use((ctx, next) => {
    const sent = ctx.get('X-Request-Id');
    ctx.state.requestId = /^[\x21-\x7e]{1,128}$/.test(sent) ? sent : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    return next();
  });
  if (service.tracing) app.use(service.tracing.requests(name));
  app.use(requestLog(logger));
  if (service.metrics) app.use(service.metrics.requests(name));
  app.use(errors(service));
  const security = API_HEADERS(edge.production);
  const defaults = Object.entries(service.headers ?? {});
  app.use(async (ctx, next) => {
    ctx.set(security);
    try {
      await next();
    } finally {
      // Set afterwards: koa-send, for one, keeps a Cache-Control it finds and sets none of its own.
      for (const [name, value] of defaults) if (!ctx.response.get(name)) ctx.set(name, value);
    }
  });
  app.use(edgeCheck(edge));
  app.use(router.routes());
  app.use(router.allowedMethods());
  if (service.files) app.use(service.files);
  if (service.redirectTrailingSlash) app.use(trailingSlash(router));
  return app;
}

/** Failures in the service's shape; a fault (not a refusal) logged with its stack. */
function errors({ shape, logger }: ServiceOptions): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // No route, or a route without this method (Allow is set).
      if (ctx.body == null && ctx.status >= 400) throw httpError(ctx.status);
    } catch (error) {
      const answer = shape(error);
      if (answer.status >= 500 && !(error instanceof HttpError && error.expose)) {
        const { method, path } = ctx;
        logger.error({ err: error, reqId: ctx.state.requestId, method, path }, 'request failed');
      }
      ctx.status = answer.status;
      ctx.body = answer.body;
      if (answer.headers) ctx.set(answer.headers);
    }
  };
}

// A client's long path must not make the log grow faster than its requests.
const LOGGED_PATH_CHARS = 160;

function requestLog(logger: Logger): Middleware {
  if (!logger.isLevelEnabled('info')) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const { path } = ctx;
      logger.info({
        reqId: ctx.state.requestId,
        method: ctx.method,
        path: path.length > LOGGED_PATH_CHARS ? `${path.slice(0, LOGGED_PATH_CHARS)}…` : path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        address: ctx.ip,
        ...(ctx.state.userId !== undefined && { userId: ctx.state.userId }),
      });
    }
  };
}

/** The client's address as trusted proxies report it, and the Host allowlist (DNS rebinding). */
function edgeCheck({ allowedHosts, trustProxy }: Edge): Middleware {
  const trust =
    typeof trustProxy === 'number'
      ? (_: string, hop: number) => hop < trustProxy
      : trustProxy && proxyaddr.compile(trustProxy);
  const allowed = new Set(allowedHosts);
  // `localhost` allows `localhost` with any port; `localhost:8080`, exactly it.
  const isAllowed = (host: string) => allowed.has(host) || allowed.has(host.replace(/:\d+$/, ''));
  return (ctx, next) => {
    if (trust) {
      ctx.request.ip = proxyaddr(ctx.req, trust);
      if (!trust(ctx.req.socket.remoteAddress ?? '', 0)) {
        // Not from a trusted proxy: what these headers claim is the client's own word.
        delete ctx.req.headers['x-forwarded-proto'];
        delete ctx.req.headers['x-forwarded-host'];
      }
    }
    if (allowedHosts && !isAllowed(ctx.host.toLowerCase())) throw httpError(400, INVALID_HOST);
    return next();
  };
}

const statusSchema = (title: string, status: string) => ({
  type: 'object',
  title,
  properties: { status: { const: status } },
  required: ['status'],
});

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

function readyRoute({ ready, stopping, contract, shape }: ServiceOptions): Route {
  return route(
    'GET /ready',
    {
      summary: 'Readiness',
      description:
        'Whether the service can answer requests now ' +
        '(its dependencies answer, and it is not stopping), ' +
        'for load balancers and readiness probes.',
      responses: {
        200: { description: 'Ready', schema: statusSchema('Ready', 'ready') },
        503: {
          description:
            'Not ready: a dependency (the database) does not answer, or the process is stopping',
          schema: contract.errorSchema,
          example: shape(httpError(503, 'database unavailable')).body,
        },
      },
    },
    async (ctx) => {
      if (stopping?.()) throw httpError(503, 'shutting down');
      await ready?.().catch(() => {
        throw httpError(503, 'database unavailable');
      });
      ctx.body = { status: 'ready' };
    },
  );
}

/** `/notes/` redirected to `/notes` (307), as Starlette does. */
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
