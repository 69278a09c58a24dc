import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RouterMiddleware } from '@koa/router';
import { notFound } from '../shared/errors.js';
import { messages } from './messages.js';

/** Swagger UI's files, served from the installed `swagger-ui-dist` package: the page works offline. */
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// Kept in a file of its own rather than inline, so the page runs under a strict CSP too.
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

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Notes API - Swagger UI</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-initializer.js"></script>
</body>
</html>
`;

export const docsPage: RouterMiddleware = (ctx) => {
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
};

export const docsInitializer: RouterMiddleware = (ctx) => {
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.body = INITIALIZER;
};

/** One of Swagger UI's files; nothing else of the package is served. */
export const docsAsset: RouterMiddleware = (ctx) => {
  const name = String(ctx.params.asset);
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!type) throw notFound(messages.notFound);
  ctx.type = type;
  ctx.set('Cache-Control', 'public, max-age=3600');
  ctx.body = createReadStream(path.join(SWAGGER_UI_DIR, name));
};
