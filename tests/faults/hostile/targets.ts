import { afterAll, beforeAll, expect } from 'vitest';
import { builtSpa, ensureSpaBuilt } from '../../../server/auth/spa.js';
import { loadConfig } from '../../../server/config.js';
import { auth, notes8000, notes8080 } from '../../../server/services.js';
import type { StartedService } from '../../../harness/service.js';
import { startTestService } from '../../support/services.js';
import type { Service } from './requests.js';

/** What the hostile tests ask of a started service, whatever its dependencies. */
type Started = Omit<StartedService<unknown>, 'db'>;

/**
 * The three services, each on its own port as the process serves it, with a few notes for the
 * ids to find; every log line kept, a line per request included. Call once per file.
 */
export function useHostileTargets(): (service: Service) => Started {
  const services: Partial<Record<Service, Started>> = {};
  const started = (service: Service) => services[service]!;

  beforeAll(async () => {
    // Every line kept, a line per request included: the log is searched for the tokens planted.
    const options = {
      deps: { config: loadConfig({}).notes },
      pool: { poolMax: 10, timeoutMs: 5_000 },
      logLevel: 'info',
    };
    services.notes8080 = await startTestService(notes8080, options);
    services.notes8000 = await startTestService(notes8000, options);
    await ensureSpaBuilt();
    const { auth: config } = loadConfig({ PASSWORD_HASH_COST: '16' });
    services.auth = await startTestService(auth, {
      deps: { config, spa: await builtSpa() },
      logLevel: 'info',
    });
    // Some notes for the ids to find.
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await started('notes8080').request('POST', '/notes', {
            json: { title: `seed ${i}`, body: 'b' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await started('notes8000').request('POST', '/notes', {
            json: { title: `seed ${i}`, content: 'c' },
          })
        ).status,
      ).toBe(201);
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.all(Object.values(services).map((service) => service.close()));
  });

  return started;
}
