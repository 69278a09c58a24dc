import { fileURLToPath } from 'node:url';
import Router, { type Layer } from '@koa/router';
import Koa, { type Context, type Middleware, type Next } from 'koa';
import * as yup from 'yup';
import { bodyReader, type ReadBody } from './body.js';
import { compression } from './compression.js';
import type { Edge, NotesConfig } from './config.js';
import type { Database } from './database.js';
import { edgeCheck } from './edge.js';
import { answerWriter, cutReporter, isAnswer, json, noBody, type Answer } from './answer.js';
import { answerHeaders } from './securityHeaders.js';
import { contractRoutes } from './docs.js';
import {
  HttpError,
  methodNotAllowed,
  notFound,
  serviceUnavailable,
  type ErrorAnswer,
} from './errors.js';
import { loggedPath, requestLogger, type Logger } from './logger.js';
import type { Measures } from './metrics.js';
import { REQUEST_ID, requestIdOf } from './requestId.js';
import { openApiDocument, type DocumentedService } from './openapi.js';
import { ROUTE_LABELS, type RequestWatch } from './requestWatch.js';
import {
  bodyValidator,
  InvalidRequestError,
  parametersValidator,
  route,
  type Route,
} from './route.js';

/**
 * A service as the process, the tests and the benchmark see it: its name, where it keeps its
 * tables (a PostgreSQL schema of its own, brought up to date by the migrations of a folder), and
 * how to make its Koa app from what it depends on. `createApp` never listens and reads no globals.
 */
export interface ServiceDescriptor<Deps extends { config: unknown }> {
  name: string;
  database?: { schema: string; migrations: string };
  /**
   * Whether a service with `database` keeps anything there with these settings; always, when not
   * said.
   */
  usesDatabase?(config: Deps['config']): boolean;
  createApp(deps: Deps): Koa;
}

/** Whether the service, with these settings, is given its migrated schema and a pool on it. */
export const needsDatabase = <Deps extends { config: unknown }>(
  descriptor: ServiceDescriptor<Deps>,
  config: Deps['config'],
): boolean => descriptor.database !== undefined && (descriptor.usesDatabase?.(config) ?? true);

/** What the process gives every service beside what the service itself needs. */
export interface Hosting {
  /** Whether the process is stopping: from then on `GET /ready` answers 503. */
  stopping?: () => boolean;
  /** What watches each request (metrics, traces); none: a request pays nothing for it. */
  watch?: RequestWatch;
  /**
   * Where the service reports what it keeps, read by the metrics (see metrics.ts); none: nothing is
   * counted.
   */
  measures?: Measures;
}

/** What a notes service is given: its pool (on its own schema), its settings and its edge. */
export interface NotesDeps extends Hosting {
  db: Database;
  logger: Logger;
  config: NotesConfig;
  edge: Edge;
}

/**
 * A service's own PostgreSQL schema, named after it, with its migrations in the repository's
 * `migrations/<name>` (found from this module, so that the compiled server finds the compiled
 * migrations beside it).
 */
export const ownSchema = (name: string) => ({
  schema: name,
  migrations: fileURLToPath(new URL(`../../migrations/${name}`, import.meta.url)),
});

export interface ServiceDefinition extends DocumentedService, Hosting {
  logger: Logger;
  /** Allowed hosts, trusted proxies, production mode (see edge.ts). */
  edge: Edge;
  /** Words every thrown failure in the service's own shape. */
  answerFor(error: unknown): ErrorAnswer;
  bodyLimitBytes: number;
  /**
   * Headers of every answer of the service's API, beyond the security headers every answer gets.
   */
  headers?: Record<string, string>;
  /**
   * Tried when no route takes the request, before it is answered as unmatched (static files, say).
   */
  fallback?: Middleware;
  /** Resolves when the service can answer requests (its database answers); `GET /ready` says so. */
  ready?: () => Promise<unknown>;
}

/**
 * The one way a service is assembled: request log, error answers, the routes (each with its
 * input validated as its schemas say), the published contract (`/openapi.json`, `/docs`), and
 * one answer for requests no route takes: 405 with `Allow` for a known path, else 404. API routes
 * return their answer and it is written in one step (see answer.ts); pages and files are
 * answered by Koa, with the service's headers set first.
 */
export function buildApp(service: ServiceDefinition): Koa {
  const { contract, logger, answerFor, watch } = service;
  const documented = {
    ...service,
    routes: [...service.routes, livenessRoute(), readinessRoute(service)],
  };
  const routes = [
    ...documented.routes,
    ...contractRoutes(contract.title, openApiDocument(documented), service.edge.production),
  ];
  const security = answerHeaders(service.edge.production);
  const reportCut = cutReporter(logger);
  const write = answerWriter({ ...security, ...service.headers }, reportCut);
  // Pages and files set their own headers beside these (helmet's, caching).
  const withHeaders =
    (middleware: Middleware): Middleware =>
    (ctx, next) => {
      ctx.set(security);
      ctx.set(REQUEST_ID, ctx.state.requestId);
      return middleware(ctx, next);
    };
  const readBody = bodyReader({ limitBytes: service.bodyLimitBytes });
  const compressed = compression();
  // A path is what it says, as in FastAPI and Echo: `/notes/` is not `/notes`, nor is `/NOTES`.
  const router = new Router({ strict: true, sensitive: true });
  for (const route of routes) {
    const handler = handlerOf(route, readBody, write);
    // What browsers load, the routes outside the API's contract (pages, the document, Swagger UI),
    // goes through Koa and the compressor; the API's answers never do (see compression.ts).
    router.register(
      routerPath(route.path),
      [route.method],
      routedAs(watch, route.path, route.internal ? withHeaders(compressed(handler)) : handler),
    );
  }

  const app = new Koa({ proxy: service.edge.trustProxy !== undefined });
  // What Koa itself sends (pages, files) reports a failure after its start here.
  app.on('error', reportCut);
  const requestLine = requestLogger(logger);
  const checkEdge = edgeCheck(service.edge);
  const routeOf = dispatch(router);
  /**
   * A failure in the service's own shape; what went wrong (a fault, not a refusal) is logged with
   * its stack.
   */
  const fail = (ctx: Context, error: unknown) => {
    const answer = answerFor(error);
    // A refusal the service chose (an HttpError: 4xx, 503 busy, 507 full) is told by the request
    // line alone; a line at error level, with its stack, is for what went wrong (a fault).
    if (answer.status >= 500 && !(error instanceof HttpError)) {
      logger.error(
        { err: error, reqId: ctx.state.requestId, method: ctx.method, path: loggedPath(ctx.path) },
        'request failed',
      );
    }
    if (ctx.res.headersSent) ctx.res.destroy();
    else write(ctx, json(answer.status, answer.body, answer.headers));
  };
  // Each step is named: traces call a step's span after its middleware.
  const use = (name: string, middleware: Middleware) =>
    app.use(Object.defineProperty(middleware, 'name', { value: name }));
  // Every request's own step, in one middleware: its id, the edge's checks, its route, and its
  // failure answered in the service's shape; then it is measured and logged. A route answered at
  // once (`/health`, `/api/me`) takes no promise of its own here: each step of Koa's middleware
  // chain costs a request a promise and its resolution.
  use('requests', (ctx, next) => {
    ctx.state.requestId = requestIdOf(ctx.req);
    const started = (requestLine || watch) && performance.now();
    const done = () => {
      watch?.answered(ctx, started!);
      requestLine?.(ctx, started!);
    };
    let routed: unknown;
    try {
      checkEdge(ctx);
      routed = routeOf(ctx, next);
    } catch (error) {
      fail(ctx, error);
      return done();
    }
    if (!(routed instanceof Promise)) return done();
    return routed.then(done, (error: unknown) => {
      fail(ctx, error);
      done();
    });
  });
  if (service.fallback)
    use(
      'fallback',
      routedAs(watch, ROUTE_LABELS.fallback, withHeaders(compressed(service.fallback))),
    );
  use(
    'unmatched',
    routedAs(
      watch,
      ROUTE_LABELS.unmatched,
      unmatched(router, service.redirectTrailingSlash ?? false, write),
    ),
  );
  return app;
}

/**
 * `middleware`, which first tells `watch` the route that took the request: where the handler is
 * chosen, so that the route is known without matching the path again. Without a watch, the
 * middleware itself.
 */
function routedAs(
  watch: RequestWatch | undefined,
  route: string,
  middleware: Middleware,
): Middleware {
  if (!watch) return middleware;
  return (ctx, next) => {
    watch.routed(ctx, route);
    return middleware(ctx, next);
  };
}

/**
 * Runs the handler of the route the request names. Each path and method has exactly one route
 * with one handler, so it is called directly, without the middleware chain `router.routes()`
 * composes for every request (about a tenth of the CPU time of a request as small as GET /api/me).
 * A path without parameters (`/health`, `/api/me`, `/notes`: most requests) is found in a map, and
 * so is the route of a path whose last segment is its only parameter (`/notes/{id}`), by the path
 * before it, which the route's own pattern then confirms; only the others go through the router's
 * matching, which tries every route's pattern in turn.
 */
function dispatch(router: Router): Middleware {
  const exact = new Map<string, Middleware>();
  const lastParameter = new Map<string, Layer>();
  for (const layer of router.stack) {
    const handler = layer.stack[0] as Middleware;
    const path = String(layer.path);
    const parent = path.slice(0, path.lastIndexOf('/') + 1);
    for (const method of layer.methods) {
      if (layer.paramNames.length === 0) exact.set(`${method} ${layer.path}`, handler);
      else if (layer.paramNames.length === 1 && !parent.includes(':'))
        lastParameter.set(`${method} ${parent}`, layer);
    }
  }
  const run = (ctx: Context, next: Next, layer: Layer) => {
    ctx.params = layer.params(ctx.path, layer.captures(ctx.path));
    return (layer.stack[0] as Middleware)(ctx, next);
  };
  return (ctx, next) => {
    const { path, method } = ctx;
    const handler = exact.get(`${method} ${path}`);
    if (handler) return handler(ctx, next);
    const candidate = lastParameter.get(`${method} ${path.slice(0, path.lastIndexOf('/') + 1)}`);
    if (candidate?.match(path)) return run(ctx, next, candidate);
    const { route, pathAndMethod } = router.match(path, method);
    if (!route) return next();
    return run(ctx, next, pathAndMethod[pathAndMethod.length - 1]!);
  };
}

const LIVE_ANSWER = json(200, { status: 'live' });
const READY_ANSWER = json(200, { status: 'ready' });

/**
 * `GET /live`: 200 while the process serves, whatever its dependencies: an orchestrator restarts a
 * process that stops answering it.
 */
function livenessRoute(): Route {
  const LIVE = {
    type: 'object',
    title: 'Live',
    properties: { status: { const: 'live' } },
    required: ['status'],
  };
  return route(
    'GET /live',
    {
      summary: 'Liveness',
      description: 'The process serves requests (whatever its database): for liveness probes.',
      responses: { 200: { description: 'Live', schema: LIVE } },
    },
    () => LIVE_ANSWER,
  );
}

/**
 * `GET /ready`: 200 when the service can answer requests now, 503 in its own error shape when a
 * dependency does not answer, and from the moment the process begins to stop, so that a balancer
 * stops sending before the connections close.
 */
function readinessRoute({ ready, stopping, contract, answerFor }: ServiceDefinition): Route {
  const unavailable = serviceUnavailable('database unavailable');
  const draining = serviceUnavailable('shutting down');
  const READY = {
    type: 'object',
    title: 'Ready',
    properties: { status: { const: 'ready' } },
    required: ['status'],
  };
  return route(
    'GET /ready',
    {
      summary: 'Readiness',
      description:
        'Whether the service can answer requests now (its dependencies answer, and it is not stopping), for load balancers and readiness probes.',
      responses: {
        200: { description: 'Ready', schema: READY },
        503: {
          description:
            'Not ready: a dependency (the database) does not answer, or the process is stopping',
          schema: contract.errorSchema,
          example: answerFor(unavailable).body,
        },
      },
    },
    async () => {
      if (stopping?.()) throw draining;
      await ready?.().catch(() => {
        throw unavailable;
      });
      return READY_ANSWER;
    },
  );
}

/** `/notes/{id}` → `/notes/:id`. */
const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * The route's handler, given its input: the path parameters validated before it runs, the body
 * when it asks. When the parameters fail, the body's failures (if any) join them in one answer.
 * The answer it returns is written (an API route); a route that answers through Koa returns none.
 * A route without parameters runs without an async step of its own.
 */
function handlerOf(
  route: Route,
  readBody: ReadBody,
  write: (ctx: Context, answer: Answer) => void,
): Middleware {
  const { params: paramsSchema, query: querySchema, body: bodySchema } = route;
  const validateParams = paramsSchema && parametersValidator(paramsSchema);
  const validateQuery = querySchema && parametersValidator(querySchema);
  const queryFields = querySchema ? Object.keys(querySchema.fields) : [];
  const validateBody = bodySchema && bodyValidator(bodySchema);
  const noBody = () => Promise.resolve(undefined);
  const bodyOf = (ctx: Context) => {
    if (!validateBody) return noBody;
    let validBody: Promise<unknown> | undefined;
    return () => (validBody ??= readBody(ctx).then(validateBody));
  };
  const answered = (ctx: Context, result: unknown): void | Promise<void> => {
    if (isAnswer(result)) return write(ctx, result);
    if (result instanceof Promise) return result.then((answer) => answered(ctx, answer));
  };
  if (!validateParams && !validateQuery)
    return (ctx) =>
      answered(ctx, route.handler(ctx, { params: undefined, query: undefined, body: bodyOf(ctx) }));
  return async (ctx) => {
    const body = bodyOf(ctx);
    const params = validateParams && (await validateParams(ctx.params));
    const query = validateQuery && (await validateQuery(lastValues(ctx.query, queryFields)));
    if (params instanceof yup.ValidationError || query instanceof yup.ValidationError) {
      const failed = (value: unknown) => (value instanceof yup.ValidationError ? value : undefined);
      throw new InvalidRequestError(
        failed(params),
        validateBody && (await bodyFailure(body())),
        failed(query),
      );
    }
    await answered(ctx, route.handler(ctx, { params, query, body }));
  };
}

/**
 * A query's parameters named `fields`, each the last of its values when it is repeated (as
 * Starlette reads them).
 */
function lastValues(
  query: Record<string, string | string[] | undefined>,
  fields: string[],
): Record<string, string | undefined> {
  return Object.fromEntries(
    fields.map((field) => {
      const value = query[field];
      return [field, Array.isArray(value) ? value[value.length - 1] : value];
    }),
  );
}

/**
 * What was wrong with a body, or undefined when it is valid; a body that cannot be read at all
 * fails alone.
 */
async function bodyFailure(validation: Promise<unknown>) {
  try {
    await validation;
    return undefined;
  } catch (error) {
    if (error instanceof InvalidRequestError) return error.body;
    throw error;
  }
}

function unmatched(
  router: Router,
  redirectTrailingSlash: boolean,
  write: (ctx: Context, answer: Answer) => void,
): Middleware {
  const methodsFor = (path: string) => [
    ...new Set(router.match(path, 'GET').path.flatMap((layer) => layer.methods)),
  ];
  return async (ctx) => {
    const allowed = methodsFor(ctx.path);
    if (allowed.length > 0) throw methodNotAllowed(allowed);
    const withoutSlash = ctx.path.replace(/\/+$/, '');
    if (
      redirectTrailingSlash &&
      withoutSlash !== ctx.path &&
      withoutSlash !== '' &&
      methodsFor(withoutSlash).length > 0
    ) {
      // Relative: the Host header is the client's to choose, the redirect must not be.
      return write(ctx, noBody(307, { location: `${withoutSlash}${ctx.search}` }));
    }
    throw notFound();
  };
}
