import type { Plugin } from 'vite';

// How the built document is shaped so that a page paints from its HTML alone, before its script.

/**
 * The pages come rendered in their HTML: their script only makes them interactive, so it is
 * fetched at low priority instead of the high one Chromium gives a module script: whatever else
 * the browser has to fetch goes first. (Lighthouse's simulation also stops counting it as
 * holding up the first paint.)
 */
export function scriptAfterFirstPaint(): Plugin {
  const entry = '<script type="module" crossorigin';
  return {
    name: 'script-after-first-paint',
    // The dev server's page is rendered by its script: nothing to paint before it.
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html) {
        if (!html.includes(entry))
          throw new Error(`no ${entry}> in the built page to fetch at low priority`);
        return html.replace(entry, '<script type="module" fetchpriority="low" crossorigin');
      },
    },
  };
}

/**
 * The stylesheet (a few kilobytes) goes into the document as a <style> element instead of a file
 * of its own: the page paints with the document's first bytes, without a second round trip first.
 * The server allows exactly this element in its Content-Security-Policy, by its hash (spa.ts).
 */
export function stylesheetInTheDocument(): Plugin {
  return {
    name: 'stylesheet-in-the-document',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, { bundle }) {
        for (const file of Object.values(bundle ?? {})) {
          if (file.type !== 'asset' || !file.fileName.endsWith('.css')) continue;
          const link = `<link rel="stylesheet" crossorigin href="/${file.fileName}">`;
          if (!html.includes(link))
            throw new Error(`no ${link} in the built page to put the stylesheet in its place`);
          html = html.replace(link, () => `<style>${String(file.source)}</style>`);
          delete bundle![file.fileName];
        }
        return html;
      },
    },
  };
}
