import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { ROOT, startProcess, type RunningProcess } from '../../harness/processes.js';
import { useTemporaryDataDir } from '../support/services.js';

// What a first start holds against a warm one: the files each process has mapped.

const dataDir = useTemporaryDataDir();

test(
  'a first start builds the pages outside the server ' +
    'process, which then holds what a warm start holds',
  async () => {
    // A copy of the repository without built pages, so that this start has to build them.
    await promisify(execFile)('npm', ['run', '--silent', 'prestart'], { cwd: ROOT });
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'first-start-'));
    const started: RunningProcess[] = [];
    const start = async () => {
      const env = { DATABASE_URL: '' };
      started.push(await startProcess({ form: 'compiled', dataDir: dataDir(), cwd: copy, env }));
      return started.at(-1)!;
    };
    try {
      // dist/server is a relative link into dist/builds, where the compiled migrations sit too.
      for (const entry of ['package.json', 'vite.config.ts', 'web', 'dist/builds', 'dist/server'])
        await fs.cp(path.join(ROOT, entry), path.join(copy, entry), {
          recursive: true,
          verbatimSymlinks: true,
        });
      await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
      const first = await start();
      await fs.access(path.join(copy, 'dist', 'web', 'index.html'));
      const firstFiles = await mappedFiles(first.pid);
      await first.stop();
      const warm = await start();
      // Vite's bundler and CSS compiler are native modules: built here, they would stay mapped.
      expect(firstFiles).toEqual(await mappedFiles(warm.pid));
    } finally {
      for (const server of started) await server.stop(5_000);
      await fs.rm(copy, { recursive: true, force: true });
    }
  },
  // The first start builds the pages: longer than a test's default on a busy machine.
  120_000,
);

/** The files `pid` has mapped: its binary, shared libraries and native modules. */
async function mappedFiles(pid: number): Promise<Set<string>> {
  const maps = await fs.readFile(`/proc/${pid}/maps`, 'utf8');
  return new Set(maps.split('\n').flatMap((line) => /\s(\/\S.*)$/.exec(line)?.[1] ?? []));
}
