/** The auth service's API as the pages use it. The session cookie travels on its own. */
import type { AccountOverview, AccountThrottle, User } from './pageState.js';

/** On failure, the answer's `error` when it carries one (none either when the network failed). */
export type LoginResult = { ok: true } | { ok: false; error: string | undefined };

export async function login(email: string, password: string): Promise<LoginResult> {
  try {
    const response = await fetch('/api/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    if (response.ok) return { ok: true };
    const body: unknown = await response.json().catch(() => null);
    const error = (body as { error?: unknown } | null)?.error;
    return { ok: false, error: typeof error === 'string' && error !== '' ? error : undefined };
  } catch {
    return { ok: false, error: undefined };
  }
}

export type Me = { kind: 'user'; user: User } | { kind: 'signed-out' } | { kind: 'failed' };

export async function fetchMe(): Promise<Me> {
  try {
    const response = await fetch('/api/me', { cache: 'no-store' });
    if (response.status === 401) return { kind: 'signed-out' };
    if (!response.ok) return { kind: 'failed' };
    const { user } = (await response.json()) as { user: User };
    return { kind: 'user', user };
  } catch {
    return { kind: 'failed' };
  }
}

export async function logout(): Promise<boolean> {
  try {
    return (await fetch('/api/logout', { method: 'POST' })).ok;
  } catch {
    return false;
  }
}

/** How an action of a signed-in page ended: its answer, or why there is none. */
export type Outcome<T> =
  | { kind: 'done'; value: T }
  | { kind: 'signed-out' }
  | { kind: 'forbidden' }
  | { kind: 'missing' }
  | { kind: 'failed' };

async function call<T>(method: 'GET' | 'DELETE', path: string): Promise<Outcome<T>> {
  try {
    const response = await fetch(path, { method, cache: 'no-store' });
    if (response.ok) return { kind: 'done', value: (await response.json()) as T };
    return {
      kind:
        ({ 401: 'signed-out', 403: 'forbidden', 404: 'missing' } as const)[
          response.status as 401 | 403 | 404
        ] ?? 'failed',
    };
  } catch {
    return { kind: 'failed' };
  }
}

type Ended = { ended: number };

/** Ends every session of the signed-in user but this one. */
export const endOtherSessions = () => call<Ended>('DELETE', '/api/sessions');
/**
 * For administrators: every account with its live sessions, its login throttling and its latest
 * events.
 */
export const fetchAccounts = () => call<{ users: AccountOverview[] }>('GET', '/api/admin/users');
export const endSession = (id: string) =>
  call<Ended>('DELETE', `/api/admin/sessions/${encodeURIComponent(id)}`);
export const endAccountSessions = (userId: string) =>
  call<Ended>('DELETE', `/api/admin/users/${encodeURIComponent(userId)}/sessions`);
/** Clears every count of the account's login throttling. */
export const unlockAccount = (userId: string) =>
  call<{ cleared: AccountThrottle }>(
    'DELETE',
    `/api/admin/users/${encodeURIComponent(userId)}/throttle`,
  );

/**
 * Full navigations, never client-side routing: every visit to /dashboard, including Back after
 * logout, must reach the server's session check.
 */
export const goTo = (path: '/login' | '/dashboard') => window.location.assign(path);
