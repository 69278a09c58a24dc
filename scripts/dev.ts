import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { createServer, type ViteDevServer } from 'vite';
import { listenVariables, loadConfig, type Config } from '../server/config.js';
import { lockDataDir, startEmbeddedPostgres } from '../server/db/embeddedPostgres.js';
import { exitOnStartupError, StartupError } from '../server/http/errors.js';
import { createLogger } from '../server/logger.js';
import { isListening } from '../server/lifecycle.js';

/**
 * `npm run dev`: one process tree with one lifetime. The database (embedded, or DATABASE_URL)
 * and Vite's dev server (the pages' modules and hot reload, on VITE_PORT) live as long as this
 * command. esbuild compiles `server/` and `migrations/` into `dist/dev/` and watches them: after
 * each change the Koa process is started again on what it compiled, the database untouched. (Plain
 * Node on compiled files starts in about half the time of a TypeScript loader.) A change that does
 * not compile is reported, and the server goes on running the code from before it.
 *
 * The server runs in a process group of its own, so that a terminal's Ctrl-C reaches this process
 * alone, which stops everything in order: the server (it drains), then Vite, then the database.
 * A server that cannot start the first time ends the command with its one line and its status;
 * after a change, it waits for the next one.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist', 'dev');
/** How long the server has to drain and stop before it is killed. */
const STOP_GRACE_MS = 10_000;

const config = exitOnStartupError(() => loadConfig());
const logger = createLogger(config.logLevel, config.logFormat).child({ service: 'dev' });
const closers: (() => Promise<unknown>)[] = [];
let stopping = false;

/** The server's process, and whether it has said where it listens (false if it exited first). */
interface Server {
  child: ChildProcess;
  ready: Promise<boolean>;
  exited: Promise<number>;
}
let server: Server | undefined;

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  // npm forwards the terminal's SIGINT: the second one finds the stop under way.
  process.on(signal, () => void stop(0));
}

try {
  const vite = await startVite(config.spa.vitePort);
  closers.push(() => vite.close());
  logger.info(`Vite serves the pages' modules on http://localhost:${config.spa.vitePort}`);
  const databaseUrl = await openDatabase(config);
  await watchServer(databaseUrl);
} catch (error) {
  if (!(error instanceof StartupError)) throw error;
  process.stderr.write(`${error.message}\n`);
  await stop(1);
}

async function startVite(port: number): Promise<ViteDevServer> {
  const vite = await createServer({
    configFile: path.join(ROOT, 'vite.config.ts'),
    appType: 'custom',
    clearScreen: false,
    server: { port, strictPort: true, origin: `http://localhost:${port}` },
  });
  try {
    await vite.listen();
  } catch (error) {
    await vite.close();
    if ((error as Error).message.includes('already in use')) {
      throw new StartupError(
        `VITE_PORT=${port} is already in use (another npm run dev?): set VITE_PORT to a free port`,
      );
    }
    throw error;
  }
  return vite;
}

/** The database's URL: DATABASE_URL, or the embedded server on DATA_DIR, started here. */
async function openDatabase({ database, services }: Config): Promise<string> {
  if (database.url) return database.url;
  const otherPorts = services.map((name) => listenVariables(name).port).join(', ');
  const lock = await lockDataDir(database.dataDir, otherPorts);
  closers.push(lock.release);
  const embedded = await startEmbeddedPostgres({ dataDir: database.dataDir, logger });
  closers.push(embedded.stop);
  return embedded.url;
}

/**
 * Compiles and starts the server, then again after each change. esbuild waits for a build's
 * `onEnd` before it builds again, so restarts never overlap.
 */
async function watchServer(databaseUrl: string): Promise<void> {
  let builds = 0;
  const restart: esbuild.Plugin = {
    name: 'restart-the-server',
    setup: (build) =>
      build.onEnd(async ({ errors }) => {
        const first = builds++ === 0;
        // Not awaited: the stop disposes of this build, which waits for its onEnd.
        if (first && errors.length > 0) return void stop(1);
        if (errors.length > 0) {
          return logger.warn('the change does not compile: the server runs the code before it');
        }
        if (!first) logger.info('a source changed: restarting the server');
        await stopServer();
        if (stopping) return;
        const started = performance.now();
        const next = startServer(databaseUrl);
        server = next;
        if (await next.ready) {
          if (!first) logger.info(`serving again in ${Math.round(performance.now() - started)} ms`);
        } else if (first) {
          void next.exited.then(stop);
        } else if (!stopping) {
          logger.warn('the server did not start: it starts again when a source changes');
        }
      }),
  };
  const context = await esbuild.context({
    absWorkingDir: ROOT,
    // The server's document of a page under `npm run dev` is filled by web/src/document.ts.
    entryPoints: ['server/**/*.ts', 'migrations/**/*.ts', 'web/src/*.ts'],
    outbase: ROOT,
    outdir: OUT,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [restart],
  });
  closers.push(() => context.dispose());
  await context.watch();
}

function startServer(databaseUrl: string): Server {
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', path.join(OUT, 'server', 'main.js')],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, SPA_MODE: 'vite' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    },
  );
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  const ready = new Promise<boolean>((resolve) => {
    child.on('message', (message) => resolve(isListening(message)));
    void exited.then(() => resolve(false));
  });
  void exited.then(async (code) => {
    if (!stopping && server?.child === child && (await ready)) {
      logger.warn(`the server exited (${code}): it starts again when a source changes`);
    }
  });
  return { child, ready, exited };
}

async function stopServer(): Promise<void> {
  if (!server) return;
  const { child, exited } = server;
  server = undefined;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(kill);
}

/** Stops the server, then what was started before it, in reverse order, and exits. */
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stopServer();
  for (const close of closers.reverse()) {
    await close().catch((error: unknown) =>
      logger.error({ err: error }, 'a step of the stop failed'),
    );
  }
  process.exit(code);
}
