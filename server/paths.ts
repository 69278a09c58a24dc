import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The repository's root folder (the one holding package.json), the same whether this module
 * runs from its source (`server/shared/`, under tsx or vitest) or compiled (`dist/server/shared/`,
 * `npm start`). Files the build does not compile (`web/`, `vite.config.ts`, `dist/web`) are found
 * from here; compiled modules find their compiled siblings (`migrations/`) relative to themselves.
 */
export const REPOSITORY_ROOT = findRoot(import.meta.dirname);

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
