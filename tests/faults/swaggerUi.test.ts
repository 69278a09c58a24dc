import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { send } from '../../harness/http.js';
import type { StartedService } from '../../harness/service.js';
import { builtSpa, ensureSpaBuilt } from '../../server/auth/spa.js';
import { loadConfig } from '../../server/config.js';
import { auth, notes8080 } from '../../server/services.js';
import { launchBrowser } from '../support/browser.js';
import { startTestService } from '../support/services.js';
import { openSwaggerUi, operationsOf } from '../support/swaggerUi.js';

// Swagger UI at /docs of the services whose specs do not ask for it (notes8000's, which does, is
// opened by `npm test`): the page shows every operation of the service's document, and loads
// nothing from another origin.

describe('Swagger UI at /docs', () => {
  const services: Record<string, Omit<StartedService<unknown>, 'db'>> = {};
  let browser: Browser;
  beforeAll(async () => {
    await ensureSpaBuilt();
    const config = loadConfig({ PASSWORD_HASH_COST: '1024' });
    services.notes8080 = await startTestService(notes8080, { deps: { config: config.notes } });
    const spa = await builtSpa();
    services.auth = await startTestService(auth, { deps: { config: config.auth, spa } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(Object.values(services).map((service) => service.close()));
  });

  test.each(['notes8080', 'auth'])(
    '%s: lists every operation of its document, from its own files only',
    async (name) => {
      const { url } = services[name]!;
      const document = (await send(url, { method: 'GET', path: '/openapi.json' })).json as object;
      const { page, listed, foreign } = await openSwaggerUi(browser, url);
      await page.close();
      expect(listed).toEqual(operationsOf(document));
      expect(foreign).toEqual([]);
    },
  );
});
