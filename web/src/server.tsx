/**
 * The server's entry (Vite builds it into `dist/web/ssr/`): a page's whole document, with the
 * markup React renders at `location` from the same components the browser then hydrates.
 */
import { StrictMode } from 'react';
import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router-dom';
import { App } from './App.js';
import { fillTemplate } from './document.js';
import type { PageState } from './pageState.js';

export type { PageState } from './pageState.js';

export function renderDocument(template: string, location: string, state: PageState): string {
  const markup = renderToString(
    <StrictMode>
      <StaticRouter location={location}>
        <App state={state} />
      </StaticRouter>
    </StrictMode>,
  );
  return fillTemplate(template, state, markup);
}
