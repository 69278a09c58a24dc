import type { Context } from 'koa';

/**
 * What the process watches of each request of a service (its metrics, its traces): told the
 * request's route once its handler is chosen, and the request once it is answered. A service
 * given none pays nothing for it: no step of a request is added.
 */
export interface RequestWatch {
  /**
   * The route that takes the request: its path as the OpenAPI document writes it (`/notes/{id}`),
   * or one of ROUTE_LABELS, never the request's own path.
   */
  routed(ctx: Context, route: string): void;
  /**
   * The answer is written (or, for pages and files, handed to Koa); `startedMs`: performance.now()
   * when the request came.
   */
  answered(ctx: Context, startedMs: number): void;
}

/** The routes of requests no route of the API or the pages takes, each a fixed label. */
export const ROUTE_LABELS = {
  /** No route, nor the fallback, took it (404, 405, a refused Host, …). */
  unmatched: 'unmatched',
  /** The service's fallback took it (the login service's static files). */
  fallback: 'fallback',
} as const;

/** Both watches, each told everything in turn; one of them when the other is missing. */
export function bothWatches(
  first: RequestWatch | undefined,
  second: RequestWatch | undefined,
): RequestWatch | undefined {
  if (!first || !second) return first ?? second;
  return {
    routed(ctx, route) {
      first.routed(ctx, route);
      second.routed(ctx, route);
    },
    answered(ctx, startedMs) {
      first.answered(ctx, startedMs);
      second.answered(ctx, startedMs);
    },
  };
}
