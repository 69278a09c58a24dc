/**
 * What the server knows about a page when it sends it: which page, and on the dashboard the
 * signed-in user its session check found. The server renders the page from it and writes it
 * into the document, where the browser reads it back to hydrate the same tree.
 */
export type Role = 'user' | 'admin';

export interface User {
  id: string;
  email: string;
  role: Role;
}

export type PageState = { page: 'login' } | { page: 'dashboard'; user: User };

/** The element of the document that carries the state, as JSON. */
export const STATE_ELEMENT_ID = 'page-state';
