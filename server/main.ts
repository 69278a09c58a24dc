import { loadConfig } from './config.js';
import { exitOnStartupError } from './http/errors.js';

/**
 * The entry point: the configuration first; then, with OTEL_EXPORTER_OTLP_ENDPOINT set, the
 * traces, which must start before the modules they instrument (Node's HTTP server, Koa, pg) are
 * imported; then the process itself (start.ts), imported only now. Without the variable the
 * tracing SDK is never loaded.
 */
const config = exitOnStartupError(() => loadConfig());
const tracing = config.tracing && (await import('./http/tracing.js')).startTracing(config.tracing);
const { start } = await import('./start.js');
await start(config, tracing);
