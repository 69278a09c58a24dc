import { register } from 'node:module';
import { context, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { KoaInstrumentation } from '@opentelemetry/instrumentation-koa';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { Middleware } from 'koa';
import type { LineFields } from '../logger.js';

/**
 * Traces over OTLP, set up by OpenTelemetry's Node SDK, which reads the standard `OTEL_*`
 * variables itself (the endpoint, the protocol, headers, the sampler, the batching delays):
 * a server span for each request, with spans of Koa's middleware and of each PostgreSQL
 * statement below it. Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (see main.ts).
 */

// The modules instrumented are loaded as ES modules, which are instrumented only when they are
// loaded through this hook: it is registered before any of them is imported, and wraps them alone.
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
  data: { include: ['node:http', 'koa', 'pg'] },
});

/** The attribute of a server span that names the service of the process that answered. */
export const SERVICE_ATTRIBUTE = 'app.service';

export interface Tracing {
  /** A log line's trace and span, when it is written within one. */
  lineFields: LineFields;
  /**
   * Middleware naming each request's server span after its route, and marking it with `service`.
   */
  requests(service: string): Middleware;
  /** Sends the spans not sent yet, and stops. */
  shutdown(): Promise<void>;
}

const OUTSIDE_SPANS = {};

/**
 * Starts the SDK for traces alone (its metrics and logs are off: the metrics are Prometheus's,
 * the logs pino's), under `serviceName`.
 */
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
      metadata?.span?.setAttribute(SERVICE_ATTRIBUTE, service);
      // The route as the OpenAPI document writes it (`/notes/{id}`), rather than the router's
      // pattern (`/notes/:id`) the Koa instrumentation gives: it names the server span.
      if (metadata?.type === RPCType.HTTP) metadata.route = ctx.routerName;
    },
    shutdown: () => sdk.shutdown(),
  };
}
