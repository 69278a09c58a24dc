import { tooManyRequests, unauthorized } from '../http/errors.js';
import type { Accounts, User } from './accounts.js';
import type { AddressBudget } from './addressBudget.js';
import type { AttemptsInFlight } from './attemptsInFlight.js';
import type { AuditTrail, RequestFacts } from './auditLog.js';
import { clientKey } from '../http/clientAddress.js';
import type { DeviceTrust } from './deviceTrust.js';
import { QueueFullError } from './fairQueue.js';
import type { Admission, LoginLimit, Outcome } from './failureCounts.js';
import type { CredentialGenerations } from './generations.js';
import { messages } from './messages.js';
import type { LoginThrottle } from './throttle.js';

export interface LoginAttempt {
  /**
   * Who asks: the client's address (`ctx.ip`), its browser and the request's id, for the audit
   * trail.
   */
  request: RequestFacts;
  /** The values of the request's device cookies. */
  deviceCookies: string[];
  /** Reads the body's email and password (throws when the body is not valid). */
  credentials: () => Promise<{ email: string; password: string }>;
}

export interface LoginSuccess {
  user: User;
  /** The account's credential generation the session is to be made with. */
  generation: number;
  /**
   * Whether the browser proved itself a trusted device of the account (it then needs no new device
   * cookie).
   */
  trustedDevice: boolean;
}

export interface LoginChecksDeps {
  accounts: Accounts;
  generations: CredentialGenerations;
  devices: DeviceTrust;
  inFlight: AttemptsInFlight;
  addresses: AddressBudget;
  throttle: LoginThrottle;
  audit: AuditTrail;
}

/**
 * Whether a login attempt gets its password checked, and the check. The cheapest refusals come
 * first, so that a refused attempt costs no password check and at most a few indexed statements:
 * 1. the client's attempts in progress in this process (429, `Retry-After: 1`), before even the
 *    body is read;
 * 2. the client address's failure budget, unless the browser proves itself a trusted device of
 *    the account it tries (429); before the body is read, when the request shows no device cookie;
 * 3. for a configured account, the pair and account throttle (429);
 * 4. the password check, in the client's turn (503 when too many wait).
 * Each limit that admitted the attempt is told how it ended. Every refusal and every failed check
 * is recorded in the audit trail with its reason; a success is the caller's to record, once its
 * session is made.
 */
export function loginChecks({
  accounts,
  generations,
  devices,
  inFlight,
  addresses,
  throttle,
  audit,
}: LoginChecksDeps) {
  const refused = (
    request: RequestFacts,
    email: string | undefined,
    limit: LoginLimit,
    retryAfterSeconds: number,
  ) => audit.record('login.throttled', request, { email }, { limit, retryAfterSeconds });

  async function checkAdmitted(
    { request, deviceCookies, credentials }: LoginAttempt,
    client: string,
  ): Promise<LoginSuccess> {
    const settlers: ((outcome: Outcome) => Promise<void>)[] = [];
    let outcome: Outcome = 'unchecked';
    let email: string | undefined;
    const admitted = async (admission: Promise<Admission>) => {
      const answer = await admission;
      if ('retryAfterSeconds' in answer) {
        refused(request, email, answer.limit, answer.retryAfterSeconds);
        throw tooManyRequests(messages.tooManyAttempts, answer.retryAfterSeconds);
      }
      settlers.push(answer.settle);
    };
    try {
      // Without a device cookie the address budget holds the attempt whatever its body says: it
      // is asked before the body is read, and a refused flood costs no parsing.
      const deviceShown = deviceCookies.length > 0;
      if (!deviceShown) await admitted(addresses.admit(client));
      const given = await credentials();
      email = given.email;
      const userId = accounts.idOf(email);
      const device =
        deviceShown && userId !== undefined
          ? await devices.recognize(deviceCookies, userId)
          : undefined;
      if (deviceShown && device === undefined) await admitted(addresses.admit(client));
      if (userId !== undefined) await admitted(throttle.admit({ account: userId, client, device }));
      // The account's generation is read while the password is checked.
      const [user, generation] = await Promise.all([
        accounts.authenticate(email, given.password, client).catch((error: unknown) => {
          if (error instanceof QueueFullError)
            audit.record('login.busy', request, { email }, { retryAfterSeconds: 1 });
          throw error;
        }),
        userId === undefined ? undefined : generations.current(userId),
      ]);
      // An instance whose credential for the account was replaced admits no one to it, and counts
      // nothing: the password it knows is no longer the account's.
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
      return { user, generation, trustedDevice: device !== undefined };
    } finally {
      const settled = await Promise.allSettled(settlers.map((settle) => settle(outcome)));
      const failure = settled.find((result) => result.status === 'rejected');
      // eslint-disable-next-line no-unsafe-finally -- a settler that failed fails the attempt
      if (failure) throw failure.reason;
    }
  }

  // Made once: the refusal a flood meets thousands of times a second need not capture a stack each
  // time.
  const tooManyAtOnce = tooManyRequests(messages.tooManyAttempts, 1);

  /** The user whose email and password the attempt gives; throws 400, 401, 429 or 503 otherwise. */
  return async function check(attempt: LoginAttempt): Promise<LoginSuccess> {
    const client = clientKey(attempt.request.address);
    if (!inFlight.take(client)) {
      refused(attempt.request, undefined, 'attempts at once', 1);
      throw tooManyAtOnce;
    }
    try {
      return await checkAdmitted(attempt, client);
    } finally {
      inFlight.release(client);
    }
  };
}

export type LoginCheck = ReturnType<typeof loginChecks>;
