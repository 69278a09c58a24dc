// The React pages (`web/`, built by Vite): built and served by the process, or under `npm run dev`
// loaded from Vite's dev server.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Context, Middleware } from 'koa';
import type { PageState } from '../../web/src/pageState.js';
import type { renderDocument } from '../../web/src/server.js';
import { FixedBody, sendFixed } from '../http/fixedBody.js';
import type { CspAllowances } from '../http/headers.js';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { REPOSITORY_ROOT } from '../paths.js';

export interface Spa {
  /** Answers with the page's document, the session's user and the page's data in it. */
  page(ctx: Context, state: PageState): Promise<void>;
  /** Serves the files pages load; passes every other request on. */
  assets: Middleware;
  csp: CspAllowances;
}

const SOURCE_DIR = path.join(REPOSITORY_ROOT, 'web');
const VITE_CONFIG = path.join(REPOSITORY_ROOT, 'vite.config.ts');
const BUILD_DIR = path.join(REPOSITORY_ROOT, 'dist', 'web');
/** Written last of the build. */
const LOGIN_PAGE = path.join(BUILD_DIR, 'login.html');
const SERVER_BUNDLE = path.join(BUILD_DIR, 'ssr', 'server.js');
const LOCK_DIR = `${BUILD_DIR}.lock`;
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 5 * 60 * 1000;
/** A file Vite hashed into assets/: no path that climbs out of it gets a year-long cache. */
const ASSET = /^\/assets\/[\w-]+(\.[\w-]+)+$/;

/** Serves the build in `dist/web`, which must exist (see ensureSpaBuilt). */
export async function builtSpa(): Promise<Spa> {
  const [template, login, bundle] = await Promise.all([
    readFile(path.join(BUILD_DIR, 'index.html'), 'utf8'),
    readFile(LOGIN_PAGE),
    // A rebuild replaces the file under the same name: its time tells this import from the last.
    stat(SERVER_BUNDLE).then(
      ({ mtimeMs }) => import(`${pathToFileURL(SERVER_BUNDLE).href}?built=${mtimeMs}`),
    ),
  ]).catch(() => {
    throw new StartupError(`The pages are not built in ${BUILD_DIR}: run "npm run build" first`);
  });
  const loginPage = new FixedBody('text/html; charset=utf-8', () => login);
  const { renderDocument: render } = bundle as { renderDocument: typeof renderDocument };
  // Loaded only with the build: under npm run dev, Vite serves the files.
  const { default: serveStatic } = await import('koa-static');
  const year = 365 * 24 * 3600 * 1000;
  const serveAssets = serveStatic(BUILD_DIR, { index: false, maxage: year, immutable: true });
  return {
    page: async (ctx, state) => {
      if (state.page === 'login') return sendFixed(ctx, loginPage);
      ctx.body = render(template, ctx.path, state);
    },
    assets: (ctx, next) => {
      if (!ASSET.test(ctx.path)) return next();
      // The same URL is sent as built: brotli-, gzip- or not compressed, as the request accepts.
      ctx.vary('Accept-Encoding');
      return serveAssets(ctx, next);
    },
    // The build's inline stylesheet allowed by its hashes, and no other inline style.
    csp: {
      styleSrc: [...template.matchAll(/<style>([\s\S]*?)<\/style>/g)].map(
        ([, css]) => `'sha256-${createHash('sha256').update(css!).digest('base64')}'`,
      ),
    },
  };
}

/** Vite's backend integration: the document loads Vite's client and the entry from `vite`. */
export function developmentSpa(vite: string): Spa {
  return {
    page: async (ctx, state) => {
      const template = await readFile(path.join(SOURCE_DIR, 'index.html'), 'utf8');
      const { fillTemplate } = await import('../../web/src/document.js');
      const document = template
        .replace('<head>', `<head>\n    <script type="module" src="${vite}/@vite/client"></script>`)
        .replace('src="/src/', `src="${vite}/src/`);
      ctx.body = fillTemplate(document, state, '');
    },
    assets: (_ctx, next) => next(),
    // Vite's client injects the styles it hot-reloads, and its socket tells it of changes; after
    // a restart of Vite it waits for the socket in a worker made from a blob.
    csp: {
      scriptSrc: [vite],
      styleSrc: ["'unsafe-inline'"],
      connectSrc: [vite.replace(/^http/, 'ws')],
      workerSrc: ['blob:'],
    },
  };
}

/**
 * Builds `dist/web` when it is missing or older than `web/` or `vite.config.ts`. Of processes
 * calling it at once, one builds while the others wait; the new build replaces the old at once.
 */
export async function ensureSpaBuilt({ logger }: { logger?: Logger } = {}): Promise<void> {
  if (await isBuildFresh()) return;
  await mkdir(path.dirname(LOCK_DIR), { recursive: true });
  for (let locked = false; !locked;) locked = await mkdir(LOCK_DIR).then(() => true, lockTaken);
  try {
    if (await isBuildFresh()) return;
    logger?.info({ outDir: BUILD_DIR }, 'building the pages with Vite');
    const staging = `${BUILD_DIR}.staging-${process.pid}`;
    // In a child process, so that Vite's memory stays out of the server; always for production.
    const vitePackage = createRequire(import.meta.url).resolve('vite/package.json');
    const vite = path.join(path.dirname(vitePackage), 'bin', 'vite.js');
    const args = ['build', '--config', VITE_CONFIG, '--outDir', staging, '--emptyOutDir'];
    await promisify(execFile)(process.execPath, [vite, ...args, '--logLevel', 'warn'], {
      cwd: REPOSITORY_ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
    });
    await rm(BUILD_DIR, { recursive: true, force: true });
    await rename(staging, BUILD_DIR);
  } finally {
    await rmdir(LOCK_DIR);
  }
}

/** Another process builds: waits a little, or removes its lock if it died; false, to try again. */
async function lockTaken(error: NodeJS.ErrnoException): Promise<false> {
  if (error.code !== 'EEXIST') throw error;
  const lock = await stat(LOCK_DIR).catch(() => undefined);
  if (lock && Date.now() - lock.mtimeMs > STALE_LOCK_MS)
    await rm(LOCK_DIR, { recursive: true, force: true });
  else await sleep(100);
  return false;
}

async function isBuildFresh(): Promise<boolean> {
  const built = await stat(LOGIN_PAGE).catch(() => undefined);
  if (!built) return false;
  const entries = await readdir(SOURCE_DIR, { recursive: true, withFileTypes: true });
  const sources = entries.flatMap((e) => (e.isFile() ? [path.join(e.parentPath, e.name)] : []));
  const times = await Promise.all([...sources, VITE_CONFIG].map((file) => stat(file)));
  return times.every(({ mtimeMs }) => mtimeMs <= built.mtimeMs);
}
