/** The auth service's API as the pages use it. The session cookie travels on its own. */
import type { User } from './pageState.js';

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

/**
 * Full navigations, never client-side routing: every visit to /dashboard, including Back after
 * logout, must reach the server's session check.
 */
export const goTo = (path: '/login' | '/dashboard') => window.location.assign(path);
