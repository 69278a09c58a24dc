import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { build, version } from 'esbuild';

/**
 * `npm start`'s first step: `server/` and `migrations/` compiled by esbuild, one file per file,
 * so that the server runs as plain Node without tsx's loader. Each build goes to
 * `dist/builds/<hash of the sources>/{server,migrations}` (the server finds its migrations beside
 * it, as in the repository) and `dist/server` is a link to the current build's server, replaced
 * in one step: a process starting from the previous build keeps reading a complete one, two
 * starts at the same moment never write over each other, and unchanged sources are not compiled
 * again.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist');
const BUILDS = path.join(DIST, 'builds');
/**
 * Builds no link names any more are removed once they are this old: a start may still be reading
 * one.
 */
const KEEP_OLD_BUILDS_MS = 10 * 60 * 1000;

/** The folders compiled, each into a folder of the same name in the build. */
const FOLDERS = ['server', 'migrations'];

const sources: string[] = [];
for (const folder of FOLDERS) {
  const files = await fs.readdir(path.join(ROOT, folder), { recursive: true });
  sources.push(
    ...files.filter((file) => file.endsWith('.ts')).map((file) => path.join(folder, file)),
  );
}
sources.sort();
const hash = createHash('sha256').update(version);
for (const file of sources) hash.update(file).update(await fs.readFile(path.join(ROOT, file)));
const id = hash.digest('hex').slice(0, 16);
const target = path.join(BUILDS, id);

if (!existsSync(target)) {
  const staging = `${target}.${process.pid}`;
  await build({
    entryPoints: sources.map((file) => path.join(ROOT, file)),
    outbase: ROOT,
    outdir: staging,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  // Another start may have finished the same build meanwhile: either copy will do.
  await fs.rename(staging, target).catch(() => fs.rm(staging, { recursive: true, force: true }));
}

const link = path.join(DIST, 'server');
if ((await fs.lstat(link).catch(() => undefined))?.isDirectory())
  await fs.rm(link, { recursive: true });
const draft = `${link}.${process.pid}`;
await fs.symlink(path.join('builds', id, 'server'), draft);
await fs.rename(draft, link);

for (const build of await fs.readdir(BUILDS)) {
  const folder = path.join(BUILDS, build);
  if (build !== id && Date.now() - (await fs.stat(folder)).mtimeMs > KEEP_OLD_BUILDS_MS)
    await fs.rm(folder, { recursive: true, force: true });
}
