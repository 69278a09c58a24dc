import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, onTestFinished, test } from 'vitest';
import { send } from '../../harness/http.js';
import { logLines } from '../../harness/logs.js';
import { startProcess } from '../../harness/processes.js';
import { postgresProcessesFor } from '../../harness/procfs.js';
import { useTemporaryDataDir } from '../support/services.js';
import {
  ANSWER_WITHIN_MS,
  isShapedOutage,
  isSuccess,
  RECOVER_WITHIN_MS,
  trafficFlow,
} from '../support/trafficFlow.js';
import { expectChecks } from '../support/checks.js';

describe('the embedded database crashes', () => {
  const dataDir = useTemporaryDataDir();

  test('a SIGKILLed postmaster restarts within 5 s; no acknowledged write is lost', async () => {
    const services = await startProcess({ dataDir: dataDir(), env: { DATABASE_URL: '' } });
    onTestFinished(async () => void (await services.stop()));
    const flow = trafficFlow(services.urls);
    await sleep(1_000);
    const postmaster = (await postgresProcessesFor(dataDir()))[0]!;
    const killedAt = performance.now();
    process.kill(postmaster, 'SIGKILL');
    const recovered = () =>
      Math.max(flow.recovery('notes8080', killedAt), flow.recovery('notes8000', killedAt));
    while (recovered() === Infinity && performance.now() - killedAt < 3 * RECOVER_WITHIN_MS)
      await sleep(50);
    await sleep(1_000);
    await flow.stop();

    const notes = flow.notes();
    const afterCrash = notes.filter((s) => s.startedAt >= killedAt);
    // Every note a client was told was created (201) must be readable now.
    const acknowledged = notes.filter((s) => s.status === 201);
    const lost = [];
    for (const { service, body } of acknowledged) {
      const path = `/notes/${(body as { id: number }).id}`;
      const read = await send(services.urls[service as 'notes8080'], { method: 'GET', path });
      if (read.status !== 200) lost.push(`${service} ${path}: ${read.status}`);
    }
    expectChecks({
      'each notes service served again within 5 s of the crash': recovered() <= RECOVER_WITHIN_MS,
      'meanwhile every request answered 2xx or 500 in shape, within 5 s': afterCrash.every(
        (s) => (isSuccess(s) || isShapedOutage(s)) && s.endedAt - s.startedAt <= ANSWER_WITHIN_MS,
      ),
      'every acknowledged note is still there': acknowledged.length > 0 && lost.length === 0,
      'the crash and the restart were logged': logLines(services.output()).some(
        (line) => line.msg === 'embedded PostgreSQL exited unexpectedly; starting it again',
      ),
      'the process kept running': services.child.exitCode === null,
    });
    expect(await services.stop()).toBe(0);
  }, 120_000);
});
