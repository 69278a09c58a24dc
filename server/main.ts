import { loadConfig } from './shared/config.js';
import { exitOnStartupError } from './shared/errors.js';

/**
 * The entry point: the configuration first; then, with OTEL_EXPORTER_OTLP_ENDPOINT set, the
 * traces, which must start before the modules they instrument (Node's HTTP server, Koa, pg) are
 * imported; then the process itself (run.ts), imported only now. Without the variable the
 * tracing SDK is never loaded.
 */
const config = exitOnStartupError(() => loadConfig());
const tracing =
  config.tracing && (await import('./shared/tracing.js')).startTracing(config.tracing);
const { run } = await import('./run.js');
await run(config, tracing);
