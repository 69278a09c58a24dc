import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as yup from 'yup';
import { FixedBody, sendFixed } from './fixedBody.js';
import { notFound } from './errors.js';
import { route, type Route } from './route.js';
import { documentHeaders } from './headers.js';

// Swagger UI from the installed package: the page works offline.
const SWAGGER_UI_PACKAGE = createRequire(import.meta.url).resolve('swagger-ui-dist/package.json');

// A file of its own rather than inline, so the page runs under a strict CSP.
const INITIALIZER = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
`;

const installed = (name: string, type: string) =>
  new FixedBody(type, () => readFile(path.join(path.dirname(SWAGGER_UI_PACKAGE), name)));

/** What `/docs/{file}` serves: Swagger UI's own files and its set-up, nothing else. */
const FILES: Record<string, FixedBody> = {
  'swagger-ui.css': installed('swagger-ui.css', 'text/css; charset=utf-8'),
  'swagger-ui-bundle.js': installed('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
  'favicon-32x32.png': installed('favicon-32x32.png', 'image/png'),
  'swagger-initializer.js': new FixedBody('text/javascript; charset=utf-8', () =>
    Buffer.from(INITIALIZER),
  ),
};

// The page links its files with `?v=` naming their bytes, so browsers may keep them a year.
const FILES_VERSION = createHash('sha256')
  .update((createRequire(import.meta.url)(SWAGGER_UI_PACKAGE) as { version: string }).version)
  .update(INITIALIZER)
  .digest('hex')
  .slice(0, 12);
const versioned = (name: string) => `/docs/${name}?v=${FILES_VERSION}`;

const page = (title: string) =>
  `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>${title} – API documentation</title>
<meta name="description" content="${title}: every operation, its parameters and answers, ` +
  `with requests you can send from the page (Swagger UI).">
<link rel="stylesheet" href="${versioned('swagger-ui.css')}">
<link rel="icon" type="image/png" href="${versioned('favicon-32x32.png')}">
</head>
<body>
<noscript><p>Swagger UI needs JavaScript; the document itself is at ` +
  `<a href="/openapi.json">/openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="${versioned('swagger-ui-bundle.js')}"></script>
<script src="${versioned('swagger-initializer.js')}"></script>
</body>
</html>
`;

/** The OpenAPI document at `/openapi.json`, and Swagger UI at `/docs`; neither in the document. */
export function docsRoutes(title: string, document: object, production: boolean): Route[] {
  const html = new FixedBody('text/html; charset=utf-8', () => Buffer.from(page(title)));
  const json = new FixedBody('application/json; charset=utf-8', () =>
    Buffer.from(JSON.stringify(document)),
  );
  const headers = documentHeaders({ production });
  return [
    route('GET /openapi.json', { internal: true }, (ctx) => sendFixed(ctx, json)),
    route('GET /docs', { internal: true, use: [headers] }, (ctx) => sendFixed(ctx, html)),
    route(
      'GET /docs/{file}',
      { internal: true, params: yup.object({ file: yup.string().defined() }) },
      (ctx, { params }) => {
        if (!Object.hasOwn(FILES, params.file)) throw notFound();
        // Only the page's own URLs are known to serve these bytes for good.
        const immutable = ctx.query.v === FILES_VERSION;
        ctx.set('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
        return sendFixed(ctx, FILES[params.file]!);
      },
    ),
  ];
}
