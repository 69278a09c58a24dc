import type { Browser } from 'playwright-core';

/**
 * The service's /docs opened in Chromium until Swagger UI has rendered it: the operations it
 * lists (`METHOD /path`, sorted), and every request the page sent to another origin so far.
 */
export async function openSwaggerUi(browser: Browser, url: string) {
  const page = await browser.newPage();
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:'))
      foreign.push(request.url());
  });
  await page.goto(`${url}/docs`);
  await page.locator('.opblock').first().waitFor();
  const listed = await page
    .locator('.opblock')
    .evaluateAll((blocks) =>
      blocks.map(
        (block) =>
          `${block.querySelector('.opblock-summary-method')?.textContent} ` +
          block.querySelector('.opblock-summary-path')?.getAttribute('data-path'),
      ),
    );
  return { page, listed: listed.sort(), foreign };
}

/** Every operation of an OpenAPI document, as `METHOD /path`, sorted. */
export const operationsOf = (document: { paths?: Record<string, object> }) =>
  Object.entries(document.paths ?? {})
    .flatMap(([route, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
    )
    .sort();
