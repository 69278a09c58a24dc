import { existsSync } from 'node:fs';
import path from 'node:path';

/** The folder holding package.json, whether this module runs from its source or compiled. */
export const REPOSITORY_ROOT = findRoot(import.meta.dirname);

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
