import { register } from 'node:module';
import { context, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation } from '@opentelemetry/instrumentation-koa';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Middleware } from 'koa';
import type { LineFields } from '../logger.js';

// ES modules are instrumented only when loaded through this hook, registered before them.
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
  data: { include: ['node:http', 'koa', 'pg'] },
});

export interface Tracing {
  /** A log line's trace and span, when it is written within one. */
  lineFields: LineFields;
  /** Names each request's server span after its route, and marks it with `service`. */
  requests(service: string): Middleware;
  shutdown(): Promise<void>;
}

const OUTSIDE_SPANS = {};

/** OpenTelemetry's SDK (it reads the `OTEL_*` variables) for traces alone. */
export function startTracing({ serviceName }: { serviceName: string }): Tracing {
  const sdk = new NodeSDK({
    serviceName,
    instrumentations: [
      new HttpInstrumentation(),
      new KoaInstrumentation(),
      new PgInstrumentation(),
    ],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return {
    lineFields() {
      const span = trace.getActiveSpan();
      if (!span) return OUTSIDE_SPANS;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    requests: (service) => async (ctx, next) => {
      const metadata = getRPCMetadata(context.active());
      await next();
      metadata?.span?.setAttribute('app.service', service);
      // The OpenAPI path (`/notes/{id}`) rather than the router's pattern (`/notes/:id`).
      if (metadata?.type === RPCType.HTTP) metadata.route = ctx.routerName;
    },
    shutdown: () => sdk.shutdown(),
  };
}
