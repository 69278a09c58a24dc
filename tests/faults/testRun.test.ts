import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { descendants, ROOT } from '../../harness/processes.js';

/** `npm test` itself, run inside this run, as a developer or CI runs it. */
describe('npm test', () => {
  it('stopped by SIGTERM mid-run, leaves no process of it behind', async () => {
    const run = npmTest(['tests/metrics.test.ts'], { TEST_DB: 'embedded' });
    // Mid-run: once a test has started a server.
    let started: number[] = [];
    await expect
      .poll(
        async () => {
          started = descendants(run.pid);
          const commands = await Promise.all(started.map(commandOf));
          return commands.some((command) => command.includes('dist/server/main.js'));
        },
        { timeout: 90_000, interval: 200 },
      )
      .toBe(true);
    process.kill(run.pid, 'SIGTERM');
    expect(await run.exited).not.toBe(0);
    await expect.poll(() => started.filter(alive), { timeout: 10_000 }).toEqual([]);
  });

  it('says first, in one line, why a forced TEST_DB=testcontainers cannot start', async () => {
    const run = npmTest(['tests/notes8000/health.test.ts'], {
      TEST_DB: 'testcontainers',
      DOCKER_HOST: 'unix:///nonexistent.sock',
    });
    expect(await run.exited).toBe(1);
    const lines = run
      .output()
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('>') && !/ RUN /.test(line));
    expect(lines[0]).toMatch(/^The tests' PostgreSQL from testcontainers could not start/);
    expect(run.output()).not.toContain('No test files found');
  });
});

function npmTest(files: string[], env: Record<string, string>) {
  const child = spawn('npm', ['test', '--', ...files], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { pid: child.pid!, exited, output: () => output };
}

const commandOf = (pid: number) =>
  fs.readFile(`/proc/${pid}/cmdline`, 'utf8').then(
    (text) => text.replaceAll('\0', ' '),
    () => '',
  );

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
