import { messages } from './messages.js';
import { STATE_ELEMENT_ID, type PageState } from './pageState.js';

/**
 * Each page's title and description, written into the document's head by the server, and whether
 * search engines may index it: the sign-in page is the service's public entry point; the others
 * are an account's pages.
 */
const HEAD: Record<PageState['page'], { title: string; description: string; indexed: boolean }> = {
  login: { title: messages.loginTitle, description: messages.loginDescription, indexed: true },
  dashboard: {
    title: messages.dashboardTitle,
    description: messages.dashboardDescription,
    indexed: false,
  },
  users: { title: messages.userManagement, description: messages.usersDescription, indexed: false },
  settings: {
    title: messages.systemSettings,
    description: messages.settingsDescription,
    indexed: false,
  },
  forbidden: {
    title: messages.forbiddenTitle,
    description: messages.forbiddenText,
    indexed: false,
  },
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The state as a JSON data block: inert (the Content-Security-Policy allows no inline script,
 * and a block of type application/json is never run), and with `<` escaped so that no value can
 * close the element.
 */
const stateBlock = (state: PageState) =>
  `<script type="application/json" ` +
  `id="${STATE_ELEMENT_ID}">${JSON.stringify(state).replace(/</g, '\\u003c')}</script>`;

/**
 * The page's document: `web/index.html` (as Vite built or transformed it) with the page's
 * head, the markup rendered on the server (none when the browser renders it), and its state.
 */
export function fillTemplate(template: string, state: PageState, markup: string): string {
  const { title, description, indexed } = HEAD[state.page];
  const head = [
    `<title>${escapeHtml(title)}</title>`,
    `<meta name="description" content="${escapeHtml(description)}" />`,
    ...(indexed ? [] : ['<meta name="robots" content="noindex" />']),
  ].join('\n    ');
  return template
    .replace('<!--page-head-->', () => head)
    .replace('<!--page-markup-->', () => markup)
    .replace('<!--page-state-->', () => stateBlock(state));
}
