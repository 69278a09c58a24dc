/**
 * The React pages (`web/`, built by Vite) as the auth app serves them.
 *
 * - `npm start` and production: `prepareSpa({ development: false, … })` builds `dist/web` first,
 *   in a child process, when it is missing or older than `web/` or `vite.config.ts`
 *   (ensureSpaBuilt), then serves it: /login as rendered at build time, /dashboard rendered per
 *   request by the server bundle, hashed files under /assets through koa-static (brotli or gzip,
 *   compressed at build time, as the browser accepts).
 * - `npm run dev`: `prepareSpa({ development: true, vitePort })`: the modules come from Vite's
 *   dev server, with hot reload; the document carries the page's state and the browser renders it.
 * - Tests: `await ensureSpaBuilt(); const spa = await builtSpa();`.
 *
 * In every mode the app itself routes `/login` and `/dashboard` (so the session check on
 * `/dashboard` runs before any HTML is sent) and asks `spa.page(path, state)` for the document of
 * the page it chose (the dashboard's with the user the check found); `spa.assets` serves what the
 * document loads.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Middleware } from 'koa';
import type { fillTemplate } from '../../web/src/document.js';
import type { PageState } from '../../web/src/pageState.js';
import type { renderDocument } from '../../web/src/server.js';
import { FixedBody } from '../http/fixedBody.js';
import type { CspAllowances } from '../http/headers.js';
import { StartupError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { REPOSITORY_ROOT } from '../paths.js';

export type { PageState } from '../../web/src/pageState.js';

export interface Spa {
  /** The HTML document of the page at `location` (a path), for what the server found for it. */
  page(location: string, state: PageState): Promise<string | FixedBody>;
  /** Serves the files pages load; passes every other request on. */
  assets: Middleware;
  csp: CspAllowances;
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
  vitePort,
  logger,
}: {
  development: boolean;
  vitePort: number;
  logger?: Logger;
}): Promise<Spa> {
  if (development) return developmentSpa(`http://localhost:${vitePort}`);
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
  ]).catch(() => {
    throw new StartupError(`The pages are not built in ${BUILD_DIR}: run "npm run build" first`);
  });
  // The same for every visitor: compressed once, at its first request.
  const loginPage = new FixedBody('text/html; charset=utf-8', () => Buffer.from(login));
  const render = (serverBundle as { renderDocument: typeof renderDocument }).renderDocument;
  // Only the hashed assets are files on the web; pages are routes of the app.
  // Loaded with the build: Vite's dev server (npm run dev) serves the files instead.
  const { default: serveStatic } = await import('koa-static');
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
 * The pages under `npm run dev`, whose modules come from Vite's dev server at `vite` (which
 * scripts/dev.ts runs), as Vite's guide to backend integration shows: the document loads Vite's
 * client and the entry module from there, and the browser renders the page from its state.
 */
export function developmentSpa(vite: string): Spa {
  const socket = vite.replace(/^http/, 'ws');
  return {
    page: async (_location, state) => {
      const template = await readFile(path.join(SOURCE_DIR, 'index.html'), 'utf8');
      const { fillTemplate: fill } = (await import('../../web/src/document.js')) as {
        fillTemplate: typeof fillTemplate;
      };
      const document = template
        .replace('<head>', `<head>\n    <script type="module" src="${vite}/@vite/client"></script>`)
        .replace('src="/src/', `src="${vite}/src/`);
      return fill(document, state, '');
    },
    // Vite serves every file the pages load.
    assets: (_ctx, next) => next(),
    // Vite's client injects the styles it hot-reloads, and its socket tells it of changes; after
    // a restart of Vite it waits for the socket in a worker made from a blob.
    csp: {
      scriptSrc: [vite],
      styleSrc: ["'unsafe-inline'"],
      connectSrc: [socket],
      workerSrc: ['blob:'],
    },
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
