import type { Database } from '../db/pool.js';
import type { Logger } from '../logger.js';
import {
  retentionStart,
  type AuditEvent,
  type AuditKeeper,
  type AuditLimits,
  type AuditQuery,
  type NewAuditEvent,
} from './auditLog.js';
import { iso } from './postgresSessions.js';

/** Past it (the database slow or away), newer events are not kept, and the log says how many. */
const MAX_WAITING = 1_000;

const COLUMNS = 'at, type, email, user_id, address, user_agent, request_id, detail';

/** A batch inserted in order; rows `$2` or more ids below its newest deleted (ids only grow). */
const KEEP = `WITH kept AS (
    INSERT INTO audit_events (${COLUMNS})
    SELECT ${COLUMNS} FROM json_to_recordset($1::json)
      AS batch (at timestamptz, type text, email text, user_id text, address text,
        user_agent text, request_id text, detail json)
    RETURNING id
  )
  DELETE FROM audit_events WHERE id <= (SELECT max(id) FROM kept) - $2`;

/** Past the retention, and past the count for batches written together by several instances. */
const TRIM =
  'DELETE FROM audit_events WHERE at < $1 OR id <= (SELECT max(id) FROM audit_events) - $2';

const LIST = `SELECT id::float8 AS id, ${iso('at')} AS time, type, email, user_id AS "userId",
    address, user_agent AS "userAgent", request_id AS "requestId", detail
  FROM audit_events
  WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR type = $2)
    AND ($3::text IS NULL OR email = $3) AND at >= $4
  ORDER BY id DESC LIMIT $5`;

/**
 * The trail in table `audit_events`, shared by every instance. Events are written after the
 * answer, with those recorded meanwhile: one statement for many, one batch at a time. A batch
 * that fails is logged and dropped (its events are in the log already).
 */
export class PostgresAuditLog implements AuditKeeper {
  #waiting: NewAuditEvent[] = [];
  /** Refused since the last batch, the queue being full. */
  #refused = 0;
  #scheduled = false;
  /** Settles once every batch scheduled so far is written or its failure logged. */
  #written: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly limits: AuditLimits,
    private readonly logger: Logger,
  ) {}

  keep(events: NewAuditEvent[]): void {
    const room = MAX_WAITING - this.#waiting.length;
    this.#waiting.push(...events.slice(0, room));
    this.#refused += Math.max(0, events.length - room);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#written = this.#written
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => this.#write());
  }

  async list({ limit, before, type, email }: AuditQuery): Promise<AuditEvent[]> {
    await this.#written;
    const retention = retentionStart(this.limits, Date.now());
    const query = [before ?? null, type ?? null, email ?? null, retention, limit];
    return (await this.db.query<AuditEvent>(LIST, query)).rows;
  }

  async trim(): Promise<void> {
    await this.db.query(TRIM, [retentionStart(this.limits, Date.now()), this.limits.maxEvents]);
  }

  async #write(): Promise<void> {
    this.#scheduled = false;
    // Of a batch larger than the count, the older events would be deleted at once.
    const batch = this.#waiting.splice(0).slice(-this.limits.maxEvents);
    const refused = this.#refused;
    this.#refused = 0;
    const rows = batch.map(({ time, userId, userAgent, requestId, ...event }) => ({
      ...event,
      at: time,
      user_id: userId,
      user_agent: userAgent,
      request_id: requestId,
    }));
    try {
      await this.db.query(KEEP, [JSON.stringify(rows), this.limits.maxEvents]);
      if (refused > 0)
        this.logger.warn(
          { lost: refused },
          'security events not kept: too many were waiting to be written',
        );
    } catch (error) {
      this.logger.warn(
        { err: (error as Error).message, lost: batch.length + refused },
        'security events not kept',
      );
    }
  }
}
