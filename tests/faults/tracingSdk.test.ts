import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import { listenOnFreePort, send } from '../../harness/http.js';
import { startProcess } from '../../harness/processes.js';
import { createTestDatabase, useTemporaryDataDir } from '../support/services.js';

// What a start costs without traces: two whole processes, each watched for the modules it loads.

const dataDir = useTemporaryDataDir();

test(
  'unset, the tracing SDK is not even loaded: the process ' +
    'imports none of it (set, the same process imports it)',
  async () => {
    const hook = new URL('../support/loadedModules.mjs', import.meta.url).href;
    const database = await createTestDatabase();
    onTestFinished(database.drop);
    // A collector that takes every export.
    const collector = http.createServer((req, res) => req.resume().on('end', () => res.end('{}')));
    const port = await listenOnFreePort(collector, '127.0.0.1');
    onTestFinished(() => new Promise<void>((resolve) => collector.close(() => resolve())));
    const loaded: Record<string, boolean> = {};
    for (const traced of [false, true]) {
      const file = path.join(dataDir(), `loaded-modules-${traced}.txt`);
      const env = {
        DATABASE_URL: database.url,
        LOADED_MODULES_FILE: file,
        SERVICES: 'notes8080',
        ...(traced && {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        }),
      };
      const started = await startProcess({
        form: 'compiled',
        dataDir: dataDir(),
        env,
        nodeFlags: ['--import', hook],
      });
      const listed = await send(started.urls.notes8080, { method: 'GET', path: '/notes' });
      expect(listed.status).toBe(200);
      await started.stop(5_000);
      const modules = await fs.readFile(file, 'utf8');
      expect(modules).toContain('/server/start.js');
      loaded[String(traced)] = modules.includes('/node_modules/@opentelemetry/');
    }
    expect(loaded).toEqual({ false: false, true: true });
  },
);
