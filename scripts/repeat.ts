import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * `npm run test:repeat -- N`: the whole suite (`npm test`'s command) N times in a row, then every
 * test that failed at least once, with how often. A test that fails one run in a few is found
 * here before a newcomer's first run finds it.
 */
const runs = Number(process.argv[2] ?? 5);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write('usage: npm run test:repeat -- N   (N: how many runs, at least 1)\n');
  process.exit(2);
}

interface JsonReport {
  numPassedTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
  }[];
}

const root = path.resolve(import.meta.dirname, '..');
const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'test-repeat-'));
const failures = new Map<string, { runs: number[]; message: string }>();
const tallies: string[] = [];

for (let run = 1; run <= runs; run++) {
  const report = path.join(folder, `run-${run}.json`);
  const started = performance.now();
  const code = await vitest([
    'run',
    '--reporter=dot',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ]);
  const seconds = Math.round((performance.now() - started) / 1000);
  const result = JSON.parse(
    await fs.readFile(report, 'utf8').catch(() => 'null'),
  ) as JsonReport | null;
  if (!result) {
    record(`run ${run}: no report (vitest exited with ${code})`, run, '');
    tallies.push(`run ${run}: no report, exit ${code}, ${seconds} s`);
    continue;
  }
  for (const file of result.testResults) {
    const name = path.relative(root, file.name);
    // A file that failed as a whole (its set-up, say) has no failed test to name.
    if (file.status === 'failed' && file.assertionResults.every((test) => test.status !== 'failed'))
      record(`${name} (the file)`, run, file.message ?? '');
    for (const test of file.assertionResults)
      if (test.status === 'failed')
        record(`${name} > ${test.fullName}`, run, test.failureMessages?.[0] ?? '');
  }
  tallies.push(
    `run ${run}: ${result.numPassedTests} passed, ${result.numFailedTests} failed, ${seconds} s`,
  );
  console.log(`[test:repeat] ${tallies.at(-1)}`);
}

console.log(
  `\n[test:repeat] ${runs} runs of the whole suite, ` +
    `Node ${process.version}, ${os.availableParallelism()} cores, load ` +
    `average ${os.loadavg()[0]!.toFixed(2)} at the end`,
);
for (const tally of tallies) console.log(`  ${tally}`);
if (failures.size === 0) console.log('No test failed in any run.');
for (const [test, { runs: failedIn, message }] of failures) {
  console.log(
    `FAILED in ${failedIn.length} of ${runs} ` +
      `(runs ${failedIn.join(', ')}): ${test}\n    ${message.split('\n')[0]!.slice(0, 300)}`,
  );
}
await fs.rm(folder, { recursive: true, force: true });
process.exit(failures.size === 0 ? 0 : 1);

function record(test: string, run: number, message: string): void {
  const known = failures.get(test) ?? { runs: [], message };
  known.runs.push(run);
  failures.set(test, known);
}

function vitest(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), ...args],
      { cwd: root, stdio: 'inherit' },
    );
    child.once('exit', (code) => resolve(code ?? 1));
  });
}
