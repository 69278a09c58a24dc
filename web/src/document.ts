import { messages } from './messages.js';
import { STATE_ELEMENT_ID, type PageState } from './pageState.js';

/** Each page's title and description, written into the document's head by the server. */
const HEAD: Record<PageState['page'], { title: string; description: string }> = {
  login: { title: messages.loginTitle, description: messages.loginDescription },
  dashboard: { title: messages.dashboardTitle, description: messages.dashboardDescription },
  users: { title: messages.userManagement, description: messages.usersDescription },
  settings: { title: messages.systemSettings, description: messages.settingsDescription },
  forbidden: { title: messages.forbiddenTitle, description: messages.forbiddenText },
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The state as a JSON data block: inert (the Content-Security-Policy allows no inline script,
 * and a block of type application/json is never run), and with `<` escaped so that no value can
 * close the element.
 */
const stateBlock = (state: PageState) =>
  `<script type="application/json" id="${STATE_ELEMENT_ID}">${JSON.stringify(state).replace(/</g, '\\u003c')}</script>`;

/**
 * The page's document: `web/index.html` (as Vite built or transformed it) with the page's
 * head, the markup rendered on the server (none when the browser renders it), and its state.
 */
export function fillTemplate(template: string, state: PageState, markup: string): string {
  const { title, description } = HEAD[state.page];
  const head = `<title>${escapeHtml(title)}</title>\n    <meta name="description" content="${escapeHtml(description)}" />`;
  return template
    .replace('<!--page-head-->', () => head)
    .replace('<!--page-markup-->', () => markup)
    .replace('<!--page-state-->', () => stateBlock(state));
}
