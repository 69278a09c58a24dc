import { clientKey } from '../http/clientAddress.js';
import { tooManyRequests, unauthorized } from '../http/errors.js';
import type { Accounts } from './accounts.js';
import type { AuditTrail, RequestFacts } from './auditLog.js';
import type { DeviceTrust } from './deviceTrust.js';
import type { LimitKeys, LoginLimits, Refusal } from './limits.js';
import { messages } from './messages.js';
import type { SessionStore } from './sessions.js';

type Parts = { accounts: Accounts; sessions: SessionStore; devices: DeviceTrust };
type Attempt = { request: RequestFacts; deviceCookies: string[]; email: string; password: string };

export const WAITING_PER_ADDRESS = 32;

/**
 * Who waits first: a browser trusted by the account it logs in to, then any attempt at a
 * configured account (which its pair and account limits keep few), then unknown emails.
 */
export type Lane = 'trusted' | 'account' | 'unknown';

/**
 * Runs password checks `atOnce` at a time. Within a lane, checks wait in a queue per client
 * address and the addresses take turns, so a flood waits behind itself.
 */
export class CheckQueue {
  #running = 0;
  readonly #lanes: Record<Lane, Map<string, (() => void)[]>> = {
    trusted: new Map(),
    account: new Map(),
    unknown: new Map(),
  };

  constructor(private readonly atOnce: number) {}

  hasRoom(address: string, lane: Lane): boolean {
    return (this.#lanes[lane].get(address)?.length ?? 0) < WAITING_PER_ADDRESS;
  }

  async run<T>(address: string, lane: Lane, check: () => Promise<T>): Promise<T> {
    const waiting = this.#lanes[lane];
    if (this.#running < this.atOnce) this.#running++;
    else
      await new Promise<void>((start) =>
        waiting.set(address, [...(waiting.get(address) ?? []), start]),
      );
    try {
      return await check();
    } finally {
      this.#handOn();
    }
  }

  /** The next check takes the place at once, before any newcomer; its address goes to the back. */
  #handOn(): void {
    for (const waiting of Object.values(this.#lanes))
      for (const [address, [start, ...others]] of waiting) {
        waiting.delete(address);
        if (others.length > 0) waiting.set(address, others);
        return start!();
      }
    this.#running--;
  }
}

/**
 * scrypt runs on libuv's 4 threads, which the database pools' connection handshakes need too: a
 * flood of logins must not take them all.
 */
const CHECKS_AT_ONCE = 2;

/**
 * The password check of an attempt, or its refusal (401, 429). A refusal costs no check: the limits
 * are read when the attempt arrives and spent in its turn. Refusals and failures are audited here;
 * a success is the caller's to audit, once its session is made.
 */
export function loginCheck(parts: Parts & { limits: LoginLimits; audit: AuditTrail }) {
  const { accounts, sessions, devices, limits, audit } = parts;
  const queue = new CheckQueue(CHECKS_AT_ONCE);
  const refuse = (request: RequestFacts, email: string, refusal: Refusal) => {
    audit.record('login.throttled', request, { email }, refusal);
    return tooManyRequests(messages.tooManyAttempts, refusal.retryAfterSeconds);
  };

  return async ({ request, deviceCookies, email, password }: Attempt) => {
    const address = clientKey(request.address);
    const userId = accounts.idOf(email);
    const device = userId && (await devices.recognize(deviceCookies, userId));
    // A trusted device answers for itself alone.
    const keys: LimitKeys = device
      ? { pair: `${userId}:device:${device}` }
      : { address, ...(userId && { pair: `${userId}:${address}`, account: userId }) };
    const early = await limits.refusal(keys);
    if (early) throw refuse(request, email, early);
    const lane = device ? 'trusted' : userId ? 'account' : 'unknown';
    if (!queue.hasRoom(address, lane))
      throw refuse(request, email, { limit: 'waiting', retryAfterSeconds: 1 });
    return queue.run(address, lane, async () => {
      const refusal = await limits.spend(keys);
      if (refusal) throw refuse(request, email, refusal);
      let outcome: 'succeeded' | 'failed' | 'unchecked' = 'unchecked';
      try {
        const [user, generation] = await Promise.all([
          accounts.authenticate(email, password),
          userId && sessions.generation(userId),
        ]);
        if (user && typeof generation === 'number') {
          outcome = 'succeeded';
          return { user, generation, trustedDevice: Boolean(device) };
        }
        // An instance whose credential was replaced admits no one to the account, counting nothing.
        if (!user) outcome = 'failed';
        const reason = !userId
          ? 'unknown email'
          : !user
            ? 'wrong password'
            : 'credential replaced by another instance';
        audit.record('login.failed', request, { email }, { reason });
        throw unauthorized(messages.invalidCredentials);
      } finally {
        await limits.settle(keys, outcome);
      }
    });
  };
}
