/** @module The reply queue on Redis: a list per conversation, a ZSET of ready conversations, leases with tokens. */
import { randomUUID } from 'node:crypto';
import { checkWaitMs, DEFAULT_REPLY_LEASE_MS, positiveInteger, type LeasedReply, type ReplyJob, type ReplyQueue } from '@parley/core';
import { RedisAdapter, type RedisAdapterOptions } from '../connection.js';
import { REPLY_ACK, REPLY_ENQUEUE, REPLY_EXTEND, REPLY_LEASE } from './redis-reply-queue.lua.js';

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
 * `P{replies}:fifo:<member>` LIST per conversation (`<requestedAt>|<job JSON>` entries),
 * `P{replies}:heads` HASH member → head entry, `P{replies}:ready` ZSET of conversations with a
 * head and no lease (score: the head's request time), `P{replies}:leases` ZSET member → lease end
 * (ms), `P{replies}:receipts` HASH member → lease token, `P{replies}:count` (jobs in the queue).
 * A member is the JSON of `[workspaceId, conversationId]`. Why not the delivery queue's Streams:
 * replies need per-conversation order and exclusivity (message groups), which a consumer group
 * does not give; this is the smallest structure that does, with the same lease semantics.
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
      ready: `${base}ready`,
      leases: `${base}leases`,
      receipts: `${base}receipts`,
      count: `${base}count`,
    };
  }

  async enqueue(job: ReplyJob): Promise<void> {
    const member = memberOf(job);
    const { fifo, heads, ready, leases, count } = this.keys(member);
    const requestedAt = Math.max(0, Math.floor(job.requestedAt));
    await this.runner.script(REPLY_ENQUEUE, {
      keys: { fifo, heads, ready, leases, count },
      args: { member, entry: `${requestedAt}|${JSON.stringify(job)}`, requestedAt },
    });
  }

  async lease(waitMs: number): Promise<LeasedReply | null> {
    checkWaitMs(waitMs);
    const deadline = Date.now() + waitMs;
    const { heads, ready, leases, receipts } = this.keys();
    for (;;) {
      if (this.closed) return null;
      const token = randomUUID();
      const reply = await this.runner.script(REPLY_LEASE, { keys: { heads, ready, leases, receipts }, args: { now: Date.now(), leaseMs: this.leaseMs, token } });
      if (Array.isArray(reply)) {
        const entry = String(reply[1]);
        return { job: JSON.parse(entry.slice(entry.indexOf('|') + 1)) as ReplyJob, receipt: token };
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

  async ack(leased: LeasedReply): Promise<boolean> {
    const member = memberOf(leased.job);
    const { fifo, heads, ready, leases, receipts, count } = this.keys(member);
    const done = await this.runner.script(REPLY_ACK, {
      keys: { fifo, heads, ready, leases, receipts, count },
      args: { member, token: leased.receipt, now: Date.now() },
    });
    return done === 1;
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
