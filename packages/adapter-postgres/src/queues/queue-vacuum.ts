/**
 * @module VACUUM of the queue tables on a timer: their rows churn (every job is inserted, updated
 * by its lease and deleted), so their space must be reclaimed often, whether or not autovacuum
 * runs on the server (docs/postgres-queues.md "Retention").
 */
import { DEFAULT_SCHEMA, quoteSchema } from '../schema.js';
import type { Sql } from '../sql.js';

/** Options of {@link QueueVacuum}. */
export interface QueueVacuumOptions {
  sql: Sql;
  schema?: string;
  /** How often, in ms; default 30 000. */
  everyMs?: number;
}

/**
 * Runs `VACUUM (SKIP_LOCKED)` of `delivery_jobs`, `reply_jobs`, `feed_signals` and the event log's
 * outbox (`outbox`, `outbox_leases`) every `everyMs`.
 * These tables hold only work in flight, so a vacuum reads a few pages and takes milliseconds; it
 * takes no lock that blocks the queues' statements, and SKIP_LOCKED makes it skip a table another
 * process is vacuuming at that moment instead of waiting. What it frees is reused by the next
 * inserts, so the tables' size stays flat under steady traffic (bench/queue-sizes.ts). A role
 * that does not own the tables gets a warning from PostgreSQL and nothing else (autovacuum then
 * does the work alone). Failures (database away) are ignored; the next tick tries again.
 */
export class QueueVacuum {
  private readonly sql: Sql;
  private readonly statement: string;
  private readonly everyMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  /** @throws RangeError for an `everyMs` that is not an integer ≥ 1 000. */
  constructor(options: QueueVacuumOptions) {
    const schema = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
    this.everyMs = options.everyMs ?? 30_000;
    if (!Number.isSafeInteger(this.everyMs) || this.everyMs < 1_000)
      throw new RangeError(`everyMs must be an integer ≥ 1 000, got ${this.everyMs}`);
    this.sql = options.sql;
    this.statement = `VACUUM (SKIP_LOCKED) ${schema}.delivery_jobs, ${schema}.reply_jobs, ${schema}.feed_signals, ${schema}.outbox, ${schema}.outbox_leases`;
  }

  /** Starts the timer (idempotent); it does not keep the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.everyMs);
    this.timer.unref();
  }

  /** One VACUUM now (what each tick runs); resolves when done, never rejects. */
  runOnce(): Promise<void> {
    this.running ??= this.sql
      .query(this.statement)
      .then(
        () => {},
        () => {},
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the timer and waits for a running VACUUM. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
