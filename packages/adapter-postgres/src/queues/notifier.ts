/**
 * @module LISTEN on one dedicated connection per process: the wake-up hints of the queues and the
 * conversation feed's signals (docs/postgres-queues.md).
 */
import pg from 'pg';
import type { PgliteDatabase } from '../sql.js';

/** Stops one `listen` registration (idempotent). */
export type Unlisten = () => Promise<void>;

/**
 * What receives PostgreSQL notifications. `listen` resolves once the LISTEN is in effect (a NOTIFY
 * committed after that reaches `onPayload`); several registrations of one channel share one
 * LISTEN. Notifications are hints: one may be lost while the connection is down, which is why
 * `onReconnect` listeners run each time the connection is back (callers look again then).
 */
export interface Notifier {
  listen(channel: string, onPayload: (payload: string) => void): Promise<Unlisten>;
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

/** Channel names are plain lower-case identifiers, so LISTEN needs no quoting and PGlite folds nothing. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

function checkChannel(channel: string): void {
  if (!CHANNEL.test(channel)) throw new TypeError(`Not a plain channel name: ${JSON.stringify(channel)}`);
}

/** Shared bookkeeping of both notifiers: callbacks per channel, and dispatch that isolates a throwing callback. */
abstract class BaseNotifier implements Notifier {
  protected readonly channels = new Map<string, Set<(payload: string) => void>>();
  protected readonly reconnectListeners = new Set<() => void>();
  protected closed = false;

  async listen(channel: string, onPayload: (payload: string) => void): Promise<Unlisten> {
    checkChannel(channel);
    if (this.closed) throw new Error('The notifier is closed.');
    const own = (payload: string) => onPayload(payload);
    let callbacks = this.channels.get(channel);
    const first = !callbacks;
    if (!callbacks) this.channels.set(channel, (callbacks = new Set()));
    callbacks.add(own);
    try {
      // Also for a later registration: wait until the channel's LISTEN is in effect.
      await this.subscribe(channel, first);
    } catch (error) {
      this.forget(channel, own);
      throw error;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      if (this.forget(channel, own) && !this.closed) await this.unsubscribe(channel).catch(() => {});
    };
  }

  onReconnect(listener: () => void): void {
    this.reconnectListeners.add(listener);
  }

  abstract close(): Promise<void>;

  /** Runs LISTEN for `channel` (when `first`), or waits until the pending one is done. */
  protected abstract subscribe(channel: string, first: boolean): Promise<void>;
  protected abstract unsubscribe(channel: string): Promise<void>;

  protected dispatch(channel: string, payload: string): void {
    for (const callback of [...(this.channels.get(channel) ?? [])]) {
      try {
        callback(payload);
      } catch {
        // One listener's failure is its own.
      }
    }
  }

  protected reconnected(): void {
    for (const listener of [...this.reconnectListeners]) {
      try {
        listener();
      } catch {
        // As above.
      }
    }
  }

  /** Removes a callback; true when it was the channel's last. */
  private forget(channel: string, callback: (payload: string) => void): boolean {
    const callbacks = this.channels.get(channel);
    if (!callbacks?.delete(callback) || callbacks.size > 0) return false;
    this.channels.delete(channel);
    return true;
  }
}

/** Options of {@link PgNotifier}. */
export interface PgNotifierOptions {
  /** How to open the dedicated connection: a direct one (`DATABASE_LISTEN_URL`) behind a transaction pooler. */
  connection: pg.ClientConfig;
  /** How often the connection is checked with `SELECT 1` (a silently dead one is replaced), in ms; default 5 000. */
  heartbeatMs?: number;
}

/**
 * {@link Notifier} on one dedicated node-postgres `Client` (never a pooled connection: a pool
 * would hand the LISTENing session to other work, and a transaction-mode pooler drops LISTEN).
 * Opened by the first `listen` (application_name `parley-listen`, a 2 s connect and a 5 s query
 * deadline, unless given); checked every `heartbeatMs`; a lost connection is reopened with backoff
 * (100 ms doubling to 5 s), every channel LISTENed again, then the `onReconnect` listeners run.
 */
export class PgNotifier extends BaseNotifier {
  private readonly connection: pg.ClientConfig;
  private readonly heartbeatMs: number;
  private client: pg.Client | undefined;
  /** Channels LISTENed on the current connection. */
  private readonly active = new Set<string>();
  private connecting: Promise<pg.Client> | undefined;
  private pending: Promise<unknown> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = 100;
  private everConnected = false;

  constructor(options: PgNotifierOptions) {
    super();
    // Deadlines, so a database that stopped answering (paused, a dead peer) is noticed and left.
    this.connection = {
      keepAlive: true,
      application_name: 'parley-listen',
      connectionTimeoutMillis: 2_000,
      query_timeout: 5_000,
      ...options.connection,
    };
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
  }

  protected subscribe(channel: string): Promise<void> {
    // LISTEN/UNLISTEN run in order on the one connection; a later registration of a channel waits
    // for the queue, and LISTENs itself when the first one's LISTEN failed.
    const run = this.pending
      .catch(() => {})
      .then(async () => {
        const client = await this.connected();
        if (!this.channels.has(channel) || this.active.has(channel)) return;
        await client.query(`LISTEN ${channel}`);
        if (this.client === client) this.active.add(channel);
      });
    this.pending = run;
    return run;
  }

  protected unsubscribe(channel: string): Promise<void> {
    const run = this.pending
      .catch(() => {})
      .then(async () => {
        if (this.channels.has(channel) || !this.client || !this.active.has(channel)) return;
        this.active.delete(channel);
        await this.client.query(`UNLISTEN ${channel}`);
      });
    this.pending = run;
    return run;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.channels.clear();
    clearInterval(this.heartbeat);
    clearTimeout(this.retryTimer);
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** The open connection, opening it (and LISTENing every channel) when there is none. */
  private connected(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    if (this.closed) throw new Error('The notifier is closed.');
    const client = new pg.Client(this.connection);
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => this.dispatch(message.channel, message.payload ?? ''));
    this.active.clear();
    try {
      await client.connect();
      for (const channel of this.channels.keys()) {
        await client.query(`LISTEN ${channel}`);
        this.active.add(channel);
      }
    } catch (error) {
      this.active.clear();
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      throw new Error('The notifier is closed.');
    }
    this.client = client;
    this.backoffMs = 100;
    this.startHeartbeat(client);
    if (this.everConnected) this.reconnected();
    this.everConnected = true;
    return client;
  }

  private startHeartbeat(client: pg.Client): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(() => this.lost(client));
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** The connection broke: drop it and, while anything listens, reopen it with backoff. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.active.clear();
    clearInterval(this.heartbeat);
    client.end().catch(() => {});
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed || this.client || this.channels.size === 0) return;
      this.connected().catch(() => {
        this.backoffMs = Math.min(this.backoffMs * 2, 5_000);
        this.scheduleReopen();
      });
    }, this.backoffMs);
    this.retryTimer.unref();
  }
}

/**
 * {@link Notifier} on a PGlite instance, which delivers NOTIFY to its own LISTENs (one process,
 * one session). Its connection cannot be lost, so `onReconnect` listeners never run.
 */
export class PgliteNotifier extends BaseNotifier {
  private readonly unlistens = new Map<string, Promise<(() => Promise<void>) | undefined>>();

  constructor(private readonly db: PgliteDatabase) {
    super();
  }

  protected async subscribe(channel: string, first: boolean): Promise<void> {
    if (first) {
      const listening = this.db.listen(channel, (payload) => this.dispatch(channel, payload));
      this.unlistens.set(channel, listening);
      try {
        await listening;
      } catch (error) {
        this.unlistens.delete(channel);
        throw error;
      }
    } else await this.unlistens.get(channel);
  }

  protected async unsubscribe(channel: string): Promise<void> {
    const unlisten = await this.unlistens.get(channel);
    this.unlistens.delete(channel);
    if (!this.db.closed) await unlisten?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.channels.clear();
    for (const channel of [...this.unlistens.keys()]) await this.unsubscribe(channel).catch(() => {});
  }
}
