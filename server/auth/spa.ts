/**
 * The React pages (`web/`, built by Vite) as the auth app serves them.
 *
 *   Production and `npm start`:  const spa = await prepareSpa({ development: false, logger });
 *       builds `dist/web` first, in a child process, when it is missing or older than `web/` or
 *       `vite.config.ts` (ensureSpaBuilt), then serves it: /login as rendered at build time
 *       (compressed at its first request), /dashboard rendered per request by the server bundle,
 *       hashed files under /assets through koa-static (brotli or gzip, compressed at build time,
 *       as the browser accepts).
 * Development (`npm run dev`): const spa = await prepareSpa({ development: true, hmrPort, logger
 * });
 *       Vite in middleware mode inside Koa, with hot reload (its socket on HMR_PORT); the
 *       document carries the page's state and the browser renders it.
 *   Tests:                       await ensureSpaBuilt(); const spa = await builtSpa();
 * Shutdown: await spa.close(); (stops Vite's dev server; nothing to do otherwise)
 *
 * In both modes the app itself routes `/login` and `/dashboard` — so the session check on
 * `/dashboard` runs before any HTML is sent — and asks `spa.page(path, state)` for the document of
 * the page it chose (the dashboard's with the user the check found); `spa.assets` serves what the
 * document loads.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Middleware } from 'koa';
import serveStatic from 'koa-static';
import type { ViteDevServer } from 'vite';
import type { fillTemplate } from '../../web/src/document.js';
import type { PageState } from '../../web/src/pageState.js';
import type { renderDocument } from '../../web/src/server.js';
import { FixedBody } from '../shared/compression.js';
import { StartupError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { REPOSITORY_ROOT } from '../shared/paths.js';

export type { PageState } from '../../web/src/pageState.js';

/** Sources a mode's pages need beyond 'self', added to the Content-Security-Policy. */
export interface CspAllowances {
  scriptSrc?: string[];
  styleSrc?: string[];
  connectSrc?: string[];
}

export interface Spa {
  /** The HTML document of the page at `location` (a path), for what the server found for it. */
  page(location: string, state: PageState): Promise<string | FixedBody>;
  /** Serves the files pages load; passes every other request on. */
  assets: Middleware;
  csp: CspAllowances;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);
const SOURCE_DIR = path.join(REPOSITORY_ROOT, 'web');
const VITE_CONFIG = path.join(REPOSITORY_ROOT, 'vite.config.ts');
const BUILD_DIR = path.join(REPOSITORY_ROOT, 'dist', 'web');
/** What a build holds besides the browser's files under assets/ (see vite.config.ts). */
const BUILT = {
  /** `web/index.html` as Vite built it: the document each page is rendered into. */
  template: path.join(BUILD_DIR, 'index.html'),
  /** `web/src/server.tsx` built for Node: renders a page's document. */
  serverBundle: path.join(BUILD_DIR, 'ssr', 'server.js'),
  /** /login, rendered at build time (it is the same for every visitor); written last. */
  login: path.join(BUILD_DIR, 'login.html'),
};
const LOCK_DIR = `${BUILD_DIR}.lock`;
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 5 * 60 * 1000;

export async function prepareSpa({
  development,
  hmrPort,
  logger,
}: {
  development: boolean;
  hmrPort?: number;
  logger?: Logger;
}): Promise<Spa> {
  if (development) return developmentSpa({ hmrPort });
  await ensureSpaBuilt({ logger });
  return builtSpa();
}

/** Serves the Vite build in `dist/web`, which must exist (see ensureSpaBuilt). */
export async function builtSpa(): Promise<Spa> {
  const [template, login, serverBundle] = await Promise.all([
    readFile(BUILT.template, 'utf8'),
    readFile(BUILT.login, 'utf8'),
    // A rebuild replaces the file under the same name: its time tells this import from the last.
    stat(BUILT.serverBundle).then(
      ({ mtimeMs }) => import(`${pathToFileURL(BUILT.serverBundle).href}?built=${mtimeMs}`),
    ),
  ]).catch((error) => {
    throw new Error(`The pages are not built (${BUILD_DIR}); run "npm run build"`, {
      cause: error,
    });
  });
  const render = (serverBundle as { renderDocument: typeof renderDocument }).renderDocument;
  const loginPage = new FixedBody('text/html; charset=utf-8', () => Buffer.from(login));
  // Only the hashed assets are files on the web; pages are routes of the app.
  const serveAssets = serveStatic(BUILD_DIR, {
    index: false,
    maxage: 365 * 24 * 3600 * 1000,
    immutable: true,
    brotli: true,
    gzip: true,
  });
  return {
    page: async (location, state) =>
      state.page === 'login' ? loginPage : render(template, location, state),
    assets: (ctx, next) => {
      if (!isAssetPath(ctx.path)) return next();
      // The same URL is sent brotli-, gzip- or not compressed, as the request accepts.
      ctx.vary('Accept-Encoding');
      return serveAssets(ctx, next);
    },
    csp: { styleSrc: inlineStyleHashes(template) },
    close: async () => undefined,
  };
}

/**
 * The build puts the pages' stylesheet into the document (see vite.config.ts): the policy allows
 * those <style> elements by their hashes, and no other inline style.
 */
function inlineStyleHashes(document: string): string[] {
  return [...document.matchAll(/<style>([\s\S]*?)<\/style>/g)].map(
    ([, css]) => `'sha256-${createHash('sha256').update(css!).digest('base64')}'`,
  );
}

/**
 * A hashed file under /assets/, and nothing else: a path that climbs out (`/assets/../index.html`,
 * encoded or not) would reach the page shell with the assets' year-long immutable cache.
 */
function isAssetPath(path: string): boolean {
  if (!path.startsWith('/assets/')) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return false;
  }
  return !decoded.split(/[/\\]/).some((segment) => segment === '..' || segment === '.');
}

/**
 * Vite's dev server in middleware mode: modules transformed on request, hot reload on a socket
 * of its own at `hmrPort` (none when undefined). Vite only logs a busy port and goes on without
 * hot reload, so the port is tried first and a busy one stops the start with a clear line.
 */
export async function developmentSpa({ hmrPort }: { hmrPort?: number } = {}): Promise<Spa> {
  if (hmrPort !== undefined) await assertPortFree(hmrPort);
  const { createServer } = await import('vite');
  const vite = await createServer({
    configFile: VITE_CONFIG,
    appType: 'custom',
    server: { middlewareMode: true, hmr: hmrPort === undefined ? false : { port: hmrPort } },
  });
  return {
    // The document with the page's state and no markup: Vite's dev server serves modules to the
    // browser only, which renders the page (the built pages are rendered by the server).
    page: async (location, state) => {
      const { fillTemplate: fill } = (await vite.ssrLoadModule('/src/document.ts')) as {
        fillTemplate: typeof fillTemplate;
      };
      return fill(
        await vite.transformIndexHtml(
          location,
          await readFile(path.join(SOURCE_DIR, 'index.html'), 'utf8'),
        ),
        state,
        '',
      );
    },
    assets: viteMiddleware(vite),
    // Vite's dev pages run an inline React Refresh preamble, inject styles, and open the HMR
    // socket.
    csp: {
      scriptSrc: ["'unsafe-inline'"],
      styleSrc: ["'unsafe-inline'"],
      connectSrc: ['ws:', 'wss:'],
    },
    close: () => vite.close(),
  };
}

/** Runs Vite's connect middlewares inside Koa; when Vite answers, Koa leaves the response alone. */
function viteMiddleware(vite: ViteDevServer): Middleware {
  return async (ctx, next) => {
    const answered = await new Promise<boolean>((resolve, reject) => {
      const done = () => resolve(true);
      ctx.res.once('finish', done).once('close', done);
      vite.middlewares(ctx.req, ctx.res, (error?: unknown) => {
        ctx.res.off('finish', done).off('close', done);
        if (error) reject(error);
        else resolve(false);
      });
    });
    if (answered) ctx.respond = false;
    else await next();
  };
}

/**
 * Builds the pages into `dist/web` with Vite (the browser's files, the server bundle, /login
 * rendered) when the build is missing or older than any file in `web/` or `vite.config.ts`.
 * Safe to call from several processes at once (parallel test files): one builds while the
 * others wait, and the finished build replaces the old at once.
 */
export async function ensureSpaBuilt({ logger }: { logger?: Logger } = {}): Promise<void> {
  if (await isBuildFresh()) return;
  await withBuildLock(async () => {
    if (await isBuildFresh()) return;
    logger?.info({ outDir: BUILD_DIR }, 'building the pages with Vite');
    const staging = `${BUILD_DIR}.staging-${process.pid}`;
    await viteBuild(staging);
    await rm(BUILD_DIR, { recursive: true, force: true });
    await rename(staging, BUILD_DIR);
  });
}

/**
 * `vite build` in a child process: Vite, Rollup and the build's memory stay out of the server,
 * which would otherwise keep about 160 MB more for its whole life. Vite picks React's production
 * or development build (and JSX runtime) from NODE_ENV, which the server may run under as 'test'
 * or 'development': the pages are always built for production.
 */
async function viteBuild(outDir: string): Promise<void> {
  const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
  await promisify(execFile)(
    process.execPath,
    [
      vite,
      'build',
      '--config',
      VITE_CONFIG,
      '--outDir',
      outDir,
      '--emptyOutDir',
      '--logLevel',
      'warn',
    ],
    {
      cwd: REPOSITORY_ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
    },
  );
}

function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new StartupError(
              `HMR_PORT=${port} is already in use (another npm run dev?): set HMR_PORT to a free port`,
            )
          : error,
      ),
    );
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

async function isBuildFresh(): Promise<boolean> {
  // The build's last file: a build that has it is complete.
  const built = await stat(BUILT.login).catch(() => undefined);
  if (!built) return false;
  const entries = await readdir(SOURCE_DIR, { recursive: true, withFileTypes: true });
  const sources = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
  const times = await Promise.all(
    [...sources, VITE_CONFIG].map(async (file) => (await stat(file)).mtimeMs),
  );
  return times.every((time) => time <= built.mtimeMs);
}

async function withBuildLock(work: () => Promise<void>): Promise<void> {
  await mkdir(path.dirname(LOCK_DIR), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const lock = await stat(LOCK_DIR).catch(() => undefined);
      if (lock && Date.now() - lock.mtimeMs > STALE_LOCK_MS)
        await rm(LOCK_DIR, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await work();
  } finally {
    await rmdir(LOCK_DIR);
  }
}
