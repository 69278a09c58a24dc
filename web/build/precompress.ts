import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Plugin } from 'vite';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Text files (the documents are rendered by the server, not served as files); images and fonts are
 * compressed already.
 */
const TEXT = /\.(js|mjs|css|svg|json|txt)$/;

/**
 * Writes `.br` and `.gz` beside every text file of the client build, which koa-static (through
 * koa-send) serves in place of the file when the browser accepts that encoding. Compressed once
 * here, at each format's best level, rather than at every request: brotli's best is far too slow
 * to run per request, and the files never change once built. Node's zlib does both formats, so
 * this takes no plugin of its own.
 */
export function precompress(): Plugin {
  return {
    name: 'precompress',
    applyToEnvironment: (environment) => environment.name === 'client',
    async writeBundle({ dir }, bundle) {
      const files = Object.keys(bundle).filter((file) => TEXT.test(file));
      await Promise.all(
        files.map(async (file) => {
          const target = path.join(dir!, file);
          const content = await readFile(target);
          const [br, gz] = await Promise.all([
            brotli(content, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: content.length,
              },
            }),
            gzip(content, { level: zlib.constants.Z_BEST_COMPRESSION }),
          ]);
          await Promise.all([writeFile(`${target}.br`, br), writeFile(`${target}.gz`, gz)]);
        }),
      );
    },
  };
}
