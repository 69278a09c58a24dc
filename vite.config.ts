import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin, type ViteBuilder } from 'vite';
import { scriptAfterFirstPaint, stylesheetInTheDocument } from './web/build/paintFirst.js';
import { precompress } from './web/build/precompress.js';
import { prerenderLogin } from './web/build/prerender.js';

const WEB = fileURLToPath(new URL('./web', import.meta.url));

/**
 * The login and dashboard pages, `web/` built into `dist/web` (or the `--outDir` given) in one
 * `vite build`: the browser's files (each text file also brotli- and gzip-compressed), then the
 * server bundle into its `ssr/` folder, then /login rendered with it into `login.html`.
 */
export default defineConfig({
  root: WEB,
  plugins: [
    react(),
    precompress(),
    scriptAfterFirstPaint(),
    stylesheetInTheDocument(),
    serverBundleInsideTheBuild(),
  ],
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    // Every browser that runs these pages' modules preloads modules natively.
    modulePreload: { polyfill: false },
  },
  environments: {
    ssr: {
      build: { rolldownOptions: { input: path.join(WEB, 'src/server.tsx') } },
      // React is bundled, in its production build, whatever NODE_ENV the server runs under:
      // the markup then always matches the production build the browser hydrates it with.
      resolve: { noExternal: true },
      define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    },
  },
  builder: {
    async buildApp(builder) {
      const { client, ssr } = builder.environments;
      await builder.build(client!);
      const entry = entryFileName(await builder.build(ssr!));
      await prerenderLogin(outDirOf(client!.config), path.join(outDirOf(ssr!.config), entry));
    },
  },
});

const outDirOf = (config: { root: string; build: { outDir: string } }) =>
  path.resolve(config.root, config.build.outDir);

/** The file of a build's entry (its first chunk). */
function entryFileName(built: Awaited<ReturnType<ViteBuilder['build']>>): string {
  const [output] = [built].flat();
  if (!output || !('output' in output)) throw new Error('the server bundle was not built');
  return output.output[0].fileName;
}

/**
 * The server bundle goes to `ssr/` inside the client's build folder, wherever `--outDir` puts
 * that: the server finds it there (server/auth/spa.ts).
 */
function serverBundleInsideTheBuild(): Plugin {
  return {
    name: 'server-bundle-inside-the-build',
    config: (config) => ({
      environments: {
        ssr: {
          build: {
            outDir: path.join(path.resolve(WEB, config.build!.outDir!), 'ssr'),
            emptyOutDir: true,
          },
        },
      },
    }),
  };
}
