import { loadConfig } from './config.js';
import { exitOnStartupError } from './http/errors.js';

// The traces start before the modules they instrument (Node's HTTP server, Koa, pg) are imported.
const config = exitOnStartupError(() => loadConfig());
const tracing = config.tracing && (await import('./http/tracing.js')).startTracing(config.tracing);
const { start } = await import('./start.js');
await start(config, tracing);
