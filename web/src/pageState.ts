/**
 * What the server knows about a page when it sends it: which page, the signed-in user its
 * session check found, and what the page shows. The server renders the page from it and writes
 * it into the document, where the browser reads it back to hydrate the same tree. The shapes are
 * those of the login service's API (its OpenAPI document), which the pages also call.
 */
export type Role = 'user' | 'admin';

export interface User {
  id: string;
  email: string;
  role: Role;
}

/** A live session, never its token (`GET /api/sessions`, `GET /api/admin/sessions`). */
export interface SessionView {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  address: string;
  userAgent: string;
  /** Whether it is the session of the request that asked. */
  current: boolean;
}

export interface AccountSessions extends User {
  sessions: SessionView[];
}

/** The effective settings an administrator may read (`GET /api/admin/settings`). */
export interface Settings {
  sessions: { store: 'memory' | 'postgres'; ttlSeconds: number; max: number; maxPerUser: number };
  throttling: {
    perPair: number;
    pairWindowSeconds: number;
    perAccount: number;
    accountWindowSeconds: number;
    perAddress: number;
    addressWindowSeconds: number;
    atOncePerAddress: number;
    deviceTrustDays: number;
  };
  trustProxy: number | string[] | null;
  allowedHosts: string[] | null;
  production: boolean;
  passwordHashCost: number;
}

export type PageState =
  | { page: 'login' }
  | { page: 'dashboard'; user: User }
  | { page: 'users'; user: User; accounts: AccountSessions[] }
  | { page: 'settings'; user: User; settings: Settings }
  /** An administrators' page asked for by a user who is not one. */
  | { page: 'forbidden'; user: User };

/** The element of the document that carries the state, as JSON. */
export const STATE_ELEMENT_ID = 'page-state';
