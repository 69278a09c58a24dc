import type Koa from 'koa';
import { listen, type RunningServer } from '../../server/shared/serve.js';

/** Serves a Koa app on a free loopback port, as the real process would. */
export function serve(app: Koa): Promise<RunningServer> {
  return listen(app, { host: '127.0.0.1', port: 0 });
}
