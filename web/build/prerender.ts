import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { renderDocument } from '../src/server.js';

/**
 * Renders /login into the client's build folder `outDir` as `login.html`, with the server bundle
 * just built, into `index.html` as Vite built it. The server (server/auth/spa.ts) serves that file
 * as /login, and renders the dashboard into the same `index.html` with the same bundle.
 */
export async function prerenderLogin(outDir: string, serverBundle: string): Promise<void> {
  const bundle = (await import(pathToFileURL(serverBundle).href)) as {
    renderDocument: typeof renderDocument;
  };
  const template = await readFile(path.join(outDir, 'index.html'), 'utf8');
  await writeFile(
    path.join(outDir, 'login.html'),
    bundle.renderDocument(template, '/login', { page: 'login' }),
  );
}
