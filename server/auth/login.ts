import { clientKey } from '../http/clientAddress.js';
import { tooManyRequests, unauthorized } from '../http/errors.js';
import type { Accounts, User } from './accounts.js';
import type { AuditTrail, RequestFacts } from './auditLog.js';
import { CheckQueue } from './checkQueue.js';
import type { DeviceTrust } from './deviceTrust.js';
import type { CredentialGenerations } from './generations.js';
import type { LimitKeys, LoginLimits, Outcome, Refusal } from './limits.js';
import { messages } from './messages.js';

export interface LoginAttempt {
  request: RequestFacts;
  /** The values of the request's device cookies. */
  deviceCookies: string[];
  email: string;
  password: string;
}

export interface LoginSuccess {
  user: User;
  /** The account's credential generation the session is made with. */
  generation: number;
  /** Whether the browser proved itself a trusted device of the account (it needs no new one). */
  trustedDevice: boolean;
}

export interface LoginCheckDeps {
  accounts: Accounts;
  generations: CredentialGenerations;
  devices: DeviceTrust;
  limits: LoginLimits;
  audit: AuditTrail;
}

/**
 * scrypt runs on libuv's thread pool (4 threads), which the database pools' connection handshakes
 * and file reads need too: a flood of logins that took every thread would starve the notes
 * services of new connections.
 */
const CHECKS_AT_ONCE = 2;

/**
 * Whether a login attempt gets its password checked, and the check. A refusal costs no password
 * check: the limits are read when the attempt arrives and spent in its turn, just before the
 * check. Every refusal and failed check is recorded in the audit trail; a success is the caller's
 * to record, once its session is made.
 */
export function loginCheck({ accounts, generations, devices, limits, audit }: LoginCheckDeps) {
  const queue = new CheckQueue(CHECKS_AT_ONCE);
  const refuse = (request: RequestFacts, email: string, refusal: Refusal) => {
    audit.record('login.throttled', request, { email }, { ...refusal });
    return tooManyRequests(messages.tooManyAttempts, refusal.retryAfterSeconds);
  };

  /** The user whose email and password the attempt gives; throws 401 or 429 otherwise. */
  return async function check({
    request,
    deviceCookies,
    email,
    password,
  }: LoginAttempt): Promise<LoginSuccess> {
    const address = clientKey(request.address);
    const userId = accounts.idOf(email);
    const device =
      userId !== undefined && deviceCookies.length > 0
        ? await devices.recognize(deviceCookies, userId)
        : undefined;
    // A trusted device answers for itself alone; anyone else spends the address's budget, and for
    // a configured account the pair's and the account's.
    const keys: LimitKeys =
      device !== undefined
        ? { pair: `${userId}:device:${device}` }
        : userId !== undefined
          ? { address, pair: `${userId}:${address}`, account: userId }
          : { address };
    const early = await limits.refusal(keys);
    if (early) throw refuse(request, email, early);
    const trusted = device !== undefined;
    if (!queue.hasRoom(address, trusted))
      throw refuse(request, email, { limit: 'waiting', retryAfterSeconds: 1 });

    return queue.run(address, trusted, async () => {
      const refusal = await limits.spend(keys);
      if (refusal) throw refuse(request, email, refusal);
      let outcome: Outcome = 'unchecked';
      try {
        const [user, generation] = await Promise.all([
          accounts.authenticate(email, password),
          userId === undefined ? undefined : generations.current(userId),
        ]);
        // An instance whose credential for the account was replaced admits no one to it, and
        // counts nothing: the password it knows is no longer the account's.
        outcome = !user ? 'failed' : generation === undefined ? 'unchecked' : 'succeeded';
        if (!user || generation === undefined) {
          const reason =
            userId === undefined
              ? 'unknown email'
              : !user
                ? 'wrong password'
                : 'credential replaced by another instance';
          audit.record('login.failed', request, { email }, { reason });
          throw unauthorized(messages.invalidCredentials);
        }
        return { user, generation, trustedDevice: trusted };
      } finally {
        await limits.settle(keys, outcome);
      }
    });
  };
}

export type LoginCheck = ReturnType<typeof loginCheck>;
