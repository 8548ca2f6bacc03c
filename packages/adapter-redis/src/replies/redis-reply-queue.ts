/** @module The reply queue on Redis: a list per conversation, a ZSET of ready conversations, leases with tokens. */
import { randomUUID } from 'node:crypto';
import type { CancelledReplyJobs, ReplyClaim, WorkspaceScope } from '@parley/core/adapter';
import {
  checkWaitMs,
  DEFAULT_REPLY_LEASE_MS,
  positiveInteger,
  type LeasedReply,
  type ReplyJob,
  type ReplyQueue,
} from '@parley/core/adapter';
import { RedisAdapter, type RedisAdapterOptions } from '../connection.js';
import type { ScriptReply } from '../script.js';
import {
  REPLY_ACK,
  REPLY_CANCEL,
  REPLY_CANCELLED,
  REPLY_ENQUEUE,
  REPLY_EXTEND,
  REPLY_LEASE,
  REPLY_REROUTE,
} from './redis-reply-queue.lua.js';

/** Options of {@link RedisReplyQueue}: the connection options of every adapter of this package, and: */
export type RedisReplyQueueOptions = RedisAdapterOptions & {
  /** How long a lease holds a conversation unless renewed, in ms; default 30 000. */
  leaseMs?: number;
  /** How often a waiting `lease` looks again, in ms; default 100. */
  pollMs?: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * {@link ReplyQueue} on Redis (standalone or Cluster), shared by any number of worker processes
 * and durable as the server's data is: a worker killed mid-reply holds its conversation only until
 * its lease ends (`leaseMs`, renewed every heartbeat while it works); the next `lease` anywhere
 * hands the request out again.
 *
 * Layout (`P` the prefix, all under the hash tag `{replies}`, so each script's keys share a slot):
 * `P{replies}:fifo:<member>` LIST per conversation (`<requestedAt>|<route>|<job JSON>` entries,
 * the route being the job's model URI-encoded), `P{replies}:heads` HASH member → head entry; a
 * conversation with a head and no lease is ready: in `P{replies}:asked` ZSET (score: the head's
 * request time) and in `P{replies}:routed` ZSET as `<route>|<time>|<member>` (scores 0), so a
 * lease finds the oldest ready head of each model it claims with one ZRANGEBYLEX, O(log n) however
 * many wait for other models. `P{replies}:leases` ZSET member → lease end (ms),
 * `P{replies}:receipts` HASH member → lease token, `P{replies}:count` (jobs in the queue),
 * `P{replies}:cancelled` HASH member → 1 while the conversation's leased head was cancelled and
 * not yet acked (`cancel` marks it in the same script that removes the waiting entries; workers
 * ask `cancelled` for all their leases in one script call).
 * `P{replies}:ready`, Parley 0.1's ready set, is only drained. A member is the JSON of
 * `[workspaceId, conversationId]`. Why not the delivery queue's Streams: replies need
 * per-conversation order and exclusivity (message groups), which a consumer group does not give;
 * this is the smallest structure that does, with the same lease semantics.
 *
 * A waiting `lease` polls every `pollMs` (a reply takes seconds; 100 ms of latency is noise).
 * Times are this process's clock, so instances need synchronized clocks (NTP). Faults reject with
 * ParleyError `service_unavailable`.
 */
export class RedisReplyQueue extends RedisAdapter implements ReplyQueue {
  readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly base: string;
  private closed = false;

  /** @throws TypeError for a prefix containing `{` or `}`; RangeError for a `leaseMs` or `pollMs` that is not an integer ≥ 1. */
  constructor(options: RedisReplyQueueOptions) {
    const leaseMs = positiveInteger(options.leaseMs, DEFAULT_REPLY_LEASE_MS, 'leaseMs');
    const pollMs = positiveInteger(options.pollMs, 100, 'pollMs');
    super(options);
    this.leaseMs = leaseMs;
    this.pollMs = pollMs;
    this.base = `${this.runner.prefix}{replies}:`;
  }

  private keys(member?: string) {
    const base = this.base;
    return {
      fifo: `${base}fifo:${member ?? ''}`,
      heads: `${base}heads`,
      asked: `${base}asked`,
      routed: `${base}routed`,
      legacy: `${base}ready`,
      leases: `${base}leases`,
      receipts: `${base}receipts`,
      count: `${base}count`,
      cancelled: `${base}cancelled`,
    };
  }

  async enqueue(job: ReplyJob): Promise<void> {
    const member = memberOf(job);
    const { fifo, heads, asked, routed, leases, count } = this.keys(member);
    await this.runner.script(REPLY_ENQUEUE, {
      keys: { fifo, heads, asked, routed, leases, count },
      args: { member, entry: entryOf(job) },
    });
  }

  async lease(waitMs: number, claim: ReplyClaim): Promise<LeasedReply | null> {
    checkWaitMs(waitMs);
    const deadline = Date.now() + waitMs;
    const { heads, asked, routed, legacy, leases, receipts, cancelled } = this.keys();
    // '': jobs of Parley 0.1, which every worker leases.
    const routes = ['', ...new Set(claim.models.map(encodeURIComponent))];
    const askedBefore = claim.askedBefore === undefined ? 0 : Math.max(0, Math.floor(claim.askedBefore));
    for (;;) {
      if (this.closed) return null;
      const token = randomUUID();
      const reply = await this.runner.script(REPLY_LEASE, {
        keys: { heads, asked, routed, legacy, leases, receipts, cancelled },
        args: { now: Date.now(), leaseMs: this.leaseMs, token, askedBefore, routes },
      });
      if (Array.isArray(reply)) {
        const leased: LeasedReply = { job: jobOf(String(reply[1])), receipt: token };
        return reply[2] === 1 ? { ...leased, cancelled: true } : leased;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return null;
      await sleep(Math.min(left, this.pollMs));
    }
  }

  async extend(leased: LeasedReply): Promise<boolean> {
    const { leases, receipts } = this.keys();
    const renewed = await this.runner.script(REPLY_EXTEND, {
      keys: { leases, receipts },
      args: { member: memberOf(leased.job), token: leased.receipt, now: Date.now(), leaseMs: this.leaseMs },
    });
    return renewed === 1;
  }

  async reroute(leased: LeasedReply, model: string): Promise<boolean> {
    const member = memberOf(leased.job);
    const { fifo, heads, asked, routed, leases, receipts } = this.keys(member);
    const done = await this.runner.script(REPLY_REROUTE, {
      keys: { fifo, heads, asked, routed, leases, receipts },
      args: { member, token: leased.receipt, now: Date.now(), entry: entryOf({ ...leased.job, model }) },
    });
    return done === 1;
  }

  async ack(leased: LeasedReply): Promise<boolean> {
    const member = memberOf(leased.job);
    const { fifo, heads, asked, routed, leases, receipts, count, cancelled } = this.keys(member);
    const done = await this.runner.script(REPLY_ACK, {
      keys: { fifo, heads, asked, routed, leases, receipts, count, cancelled },
      args: { member, token: leased.receipt, now: Date.now() },
    });
    return done === 1;
  }

  async waiting(scope: WorkspaceScope, conversationId: string): Promise<number> {
    const { fifo } = this.keys(memberOf({ workspaceId: scope.workspaceId, conversationId }));
    return Number(await this.runner.run((client) => client.llen(fifo)));
  }

  async cancel(scope: WorkspaceScope, conversationId: string): Promise<CancelledReplyJobs> {
    const member = memberOf({ workspaceId: scope.workspaceId, conversationId });
    const { fifo, heads, asked, routed, legacy, leases, receipts, count, cancelled } = this.keys(member);
    const reply = await this.runner.script(REPLY_CANCEL, {
      keys: { fifo, heads, asked, routed, legacy, leases, receipts, count, cancelled },
      args: { member, now: Date.now() },
    });
    const [removed, running] = reply as [ScriptReply[], ScriptReply[]];
    return { removed: removed.map((entry) => jobOf(String(entry))), running: running.map((e) => jobOf(String(e))) };
  }

  async cancelled(leases: readonly LeasedReply[]): Promise<string[]> {
    if (leases.length === 0) return [];
    const keys = this.keys();
    const found = await this.runner.script(REPLY_CANCELLED, {
      keys: { leases: keys.leases, receipts: keys.receipts, cancelled: keys.cancelled },
      args: {
        now: Date.now(),
        members: leases.map((leased) => memberOf(leased.job)),
        tokens: leases.map((l) => l.receipt),
      },
    });
    return (found as number[]).map((index) => leases[index - 1]!.receipt);
  }

  async size(): Promise<number> {
    const count = await this.runner.run((client) => client.get(this.keys().count));
    return Math.max(0, Number(count ?? 0));
  }

  /** Ends waiting leases with `null` at their next look, then closes the client if this queue created it. */
  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
  }
}

function memberOf(job: Pick<ReplyJob, 'workspaceId' | 'conversationId'>): string {
  return JSON.stringify([job.workspaceId, job.conversationId]);
}

/** A list entry: `<requestedAt>|<route>|<job JSON>` (see redis-reply-queue.lua.ts). */
function entryOf(job: ReplyJob): string {
  return `${Math.max(0, Math.floor(job.requestedAt))}|${encodeURIComponent(job.model)}|${JSON.stringify(job)}`;
}

/** The job of an entry, also of Parley 0.1's `<requestedAt>|<job JSON>` (its job has no model: `''`). */
function jobOf(entry: string): ReplyJob {
  const afterTime = entry.indexOf('|') + 1;
  const json = entry[afterTime] === '{' ? entry.slice(afterTime) : entry.slice(entry.indexOf('|', afterTime) + 1);
  const job = JSON.parse(json) as ReplyJob;
  return { ...job, model: job.model ?? '' };
}
