/** @module The conversation feed on PostgreSQL: NOTIFY on a channel per conversation, or a polled table where LISTEN is unavailable. */
import type { ConversationFeed, FeedSignal, FeedSubscription, WorkspaceScope } from '@parley/core/adapter';
import { DEFAULT_SCHEMA, quoteSchema } from '../schema.js';
import type { Sql } from '../sql.js';
import { feedChannel } from './channels.js';
import type { Notifier } from './notifier.js';
import { splitSignal } from './split-signal.js';

/** Options of {@link PostgresConversationFeed}. */
export interface PostgresConversationFeedOptions {
  sql: Sql;
  /** The schema migrated with `0002_queues.sql`; default `parley`. */
  schema?: string;
  /**
   * Where this process LISTENs (a dedicated connection: `DATABASE_LISTEN_URL` behind a
   * transaction-mode pooler). `null`: LISTEN is unavailable, so signals go through the table
   * `feed_signals` and subscribers poll it. Every process of a deployment must choose alike.
   */
  notifier: Notifier | null;
  /** Without a notifier: how often subscribed conversations are polled, in ms; default 200. */
  pollMs?: number;
}

type Listener = (signal: FeedSignal) => void;

/** How many signals of one conversation may wait for earlier ones to be sent before more are dropped. */
const MAX_WAITING_SIGNALS = 1_000;
/** Signals sent by one statement at most. */
const SEND_BATCH = 500;
/** Rows one poll reads; feed rows are kept this long before bounded cleanup deletes them. */
const POLL_BATCH = 1_000;
const KEEP_SECONDS = 60;
const CLEANUP_EVERY_MS = 10_000;

/**
 * {@link ConversationFeed} on PostgreSQL 14+ (and PGlite, whose NOTIFY reaches its own LISTENs).
 * With a notifier: `publish` hands over a `pg_notify` per signal on the conversation's channel
 * (`f_` + a hash of schema, workspace and conversation), the signals waiting sent together in one
 * statement (see `publish`), and `subscribe` LISTENs on it on the process's dedicated connection,
 * resolving once the LISTEN is in effect. A NOTIFY payload stops at 8 000 bytes, so a longer
 * `message.delta` goes as several deltas in a row (its text split at character boundaries, sent
 * in one statement, so in order and together; each payload of a statement is prefixed with its
 * number and a space, since PostgreSQL folds identical payloads of one transaction) and a longer
 * `reply.failed` error is cut. Signals are hints, at most once, as the port says.
 *
 * Without a notifier, `publish` inserts rows (likewise together) into the unlogged table `feed_signals` and each
 * process polls the conversations it has subscribers for every `pollMs` (one indexed query for all
 * of them); rows older than a minute are deleted in batches of 1 000.
 */
export class PostgresConversationFeed implements ConversationFeed {
  private readonly sql: Sql;
  private readonly schema: string;
  private readonly notifier: Notifier | null;
  private readonly pollMs: number;
  private readonly text: ReturnType<typeof statements>;
  /** Table mode: per channel, its listeners and the last row seen. */
  private readonly polled = new Map<string, { listeners: Set<Listener>; after: number }>();
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private lastCleanup = 0;
  /** Signals handed over and not yet sent, in the order published, and how many per channel. */
  private outgoing: { channel: string; signal: FeedSignal }[] = [];
  private readonly waiting = new Map<string, number>();
  /** The sends in progress (one statement at a time), while there is anything to send. */
  private sending: Promise<void> | null = null;

  /** @throws TypeError for a schema that is not a plain identifier; RangeError for a `pollMs` that is not an integer ≥ 1. */
  constructor(options: PostgresConversationFeedOptions) {
    this.schema = options.schema ?? DEFAULT_SCHEMA;
    this.text = statements(quoteSchema(this.schema));
    this.sql = options.sql;
    this.notifier = options.notifier;
    this.pollMs = options.pollMs ?? 200;
    if (!Number.isSafeInteger(this.pollMs) || this.pollMs < 1)
      throw new RangeError(`pollMs must be a positive integer, got ${this.pollMs}`);
  }

  /**
   * Hands `signal` over without waiting for the database, so a write that signals costs its
   * caller no extra round trip (as on Redis). Signals are sent by one statement at a time, in the
   * order published (two pooled connections could otherwise commit one conversation's signals out
   * of order): a lone signal at once, and the ones handed over while a statement is out all
   * together in the next, so under load many conversations' signals share one statement. Past
   * {@link MAX_WAITING_SIGNALS} of one conversation waiting, more are dropped, and a send that
   * fails is dropped too (the feed is at-most-once).
   */
  async publish({ workspaceId }: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void> {
    const channel = feedChannel(this.schema, workspaceId, conversationId);
    const waiting = this.waiting.get(channel) ?? 0;
    if (waiting >= MAX_WAITING_SIGNALS) return;
    this.waiting.set(channel, waiting + 1);
    this.outgoing.push({ channel, signal });
    this.sending ??= this.drain();
  }

  /** Sends what was handed over, a statement at a time, until nothing waits. */
  private async drain(): Promise<void> {
    while (this.outgoing.length > 0) {
      const batch = this.outgoing.splice(0, SEND_BATCH);
      await this.send(batch).catch(() => {});
      for (const { channel } of batch) {
        const left = this.waiting.get(channel)! - 1;
        if (left === 0) this.waiting.delete(channel);
        else this.waiting.set(channel, left);
      }
    }
    this.sending = null;
  }

  private async send(batch: { channel: string; signal: FeedSignal }[]): Promise<void> {
    if (this.notifier) {
      // Numbered: PostgreSQL folds identical payloads of one channel sent in one transaction.
      const channels: string[] = [];
      const payloads: string[] = [];
      for (const { channel, signal } of batch)
        for (const payload of splitSignal(signal)) {
          payloads.push(`${payloads.length} ${payload}`);
          channels.push(channel);
        }
      await this.sql.query(this.text.notify, [channels, payloads]);
      return;
    }
    await this.sql.query(this.text.insert, [
      batch.map(({ channel }) => channel),
      batch.map(({ signal }) => JSON.stringify(signal)),
    ]);
    if (Date.now() - this.lastCleanup >= CLEANUP_EVERY_MS) {
      this.lastCleanup = Date.now();
      void this.sql.query(this.text.cleanup, []).catch(() => {});
    }
  }

  async subscribe(
    { workspaceId }: WorkspaceScope,
    conversationId: string,
    listener: Listener,
  ): Promise<FeedSubscription> {
    const channel = feedChannel(this.schema, workspaceId, conversationId);
    const own: Listener = (signal) => listener(signal);
    if (this.notifier) {
      const unlisten = await this.notifier.listen(channel, (payload) =>
        deliver(own, payload.slice(payload.indexOf(' ') + 1)),
      );
      return { unsubscribe: unlisten };
    }
    const [row] = await this.sql.query<{ last: number }>(this.text.last, []);
    let entry = this.polled.get(channel);
    if (!entry) this.polled.set(channel, (entry = { listeners: new Set(), after: Number(row?.last ?? 0) }));
    entry.listeners.add(own);
    this.startPolling();
    let done = false;
    return {
      unsubscribe: async () => {
        if (done) return;
        done = true;
        const current = this.polled.get(channel);
        if (current?.listeners.delete(own) && current.listeners.size === 0) this.polled.delete(channel);
        if (this.polled.size === 0) this.stopPolling();
      },
    };
  }

  /** Sends what was handed over, then stops polling; subscriptions made through a notifier end with the notifier (the caller's). */
  async close(): Promise<void> {
    await this.sending;
    this.polled.clear();
    this.stopPolling();
  }

  private startPolling(): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.poll(), this.pollMs);
    this.pollTimer.unref();
  }

  private stopPolling(): void {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.polled.size === 0) return;
    this.polling = true;
    try {
      const channels = [...this.polled.keys()];
      const after = channels.map((channel) => this.polled.get(channel)!.after);
      const rows = await this.sql.query<{ seq: number; channel: string; signal: string }>(this.text.poll, [
        channels,
        after,
      ]);
      for (const row of rows) {
        const entry = this.polled.get(row.channel);
        if (!entry || row.seq <= entry.after) continue;
        entry.after = row.seq;
        for (const listener of [...entry.listeners]) deliver(listener, row.signal);
      }
    } catch {
      // The database is away: the next tick looks again (signals are hints; streams re-read storage).
    } finally {
      this.polling = false;
    }
  }
}

function deliver(listener: Listener, text: string): void {
  let signal: FeedSignal;
  try {
    signal = JSON.parse(text) as FeedSignal;
  } catch {
    return;
  }
  try {
    listener(signal);
  } catch {
    // One stream's failure is its own.
  }
}

function statements(schema: string) {
  const table = `${schema}.feed_signals`;
  return {
    notify: `SELECT pg_notify(channel, payload) FROM unnest($1::text[], $2::text[]) AS given(channel, payload)`,
    insert: `INSERT INTO ${table} (channel, signal) SELECT * FROM unnest($1::text[], $2::text[])`,
    last: `SELECT coalesce(max(seq), 0) AS last FROM ${table}`,
    poll: `
      SELECT s.seq, s.channel, s.signal
      FROM unnest($1::text[], $2::int8[]) AS wanted(channel, after)
      JOIN ${table} AS s ON s.channel = wanted.channel AND s.seq > wanted.after
      ORDER BY s.seq LIMIT ${POLL_BATCH}`,
    cleanup: `
      DELETE FROM ${table} WHERE seq IN (
        SELECT seq FROM ${table} WHERE created_at < now() - interval '${KEEP_SECONDS} seconds' ORDER BY seq LIMIT 1000
      )`,
  };
}
