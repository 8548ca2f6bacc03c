/** @module `runReplyQueueContract`: the reply queue port's contract, run by every reply queue adapter. */
import { randomUUID } from 'node:crypto';
import type { LeasedReply, ReplyClaim, ReplyJob, ReplyQueue } from '../ports/reply-queue.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** A queue under test, optionally a second instance over the same backend, and its cleanup. */
export interface ReplyQueueFixture {
  queue: ReplyQueue;
  /** Another instance over the same backend (another worker process); leave out and skip `'reply queue instances'` otherwise. */
  peer?: () => ReplyQueue | Promise<ReplyQueue>;
  cleanup?: () => void | Promise<void>;
}

/** Returns a fresh, empty queue with lease `leaseMs`, or a {@link ReplyQueueFixture}. */
export type ReplyQueueFactory = (options: {
  leaseMs: number;
}) => ReplyQueue | ReplyQueueFixture | Promise<ReplyQueue | ReplyQueueFixture>;

/** `skip` names opted-out groups (`'reply queue instances'`) or tests (`'reply queue: <title>'`). */
export interface ReplyQueueContractOptions {
  skip?: readonly string[];
}

const SHORT_LEASE_MS = 400;
const LONG_LEASE_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let clock = Date.parse('2026-03-01T09:00:00.000Z');

/** The model of {@link contractReplyJob}'s jobs unless given. */
export const CONTRACT_MODEL = 'contract-model';
/** A claim of {@link CONTRACT_MODEL}: what a worker with the contract's model leases. */
export const CONTRACT_CLAIM: ReplyClaim = { models: [CONTRACT_MODEL] };

/**
 * A reply request of conversation `conversationId` (workspace `ws_contract_a`, model
 * {@link CONTRACT_MODEL} unless given), with a W3C trace context (with a `tracestate`), which
 * every test then checks comes back with the job.
 */
export function contractReplyJob(conversationId: string, overrides: Partial<ReplyJob> = {}): ReplyJob {
  clock += 1;
  return {
    id: `rpl_${randomUUID()}`,
    workspaceId: 'ws_contract_a',
    conversationId,
    inReplyTo: `msg_${randomUUID().slice(0, 8)}`,
    requestedAt: clock,
    model: CONTRACT_MODEL,
    traceContext: `00-4bf92f3577b34da6a3ce929d0e0e4736-${String(clock % 1e16).padStart(16, '0')}-01 congo=t61rcWkgMzE`,
    ...overrides,
  };
}

/** Runs the reply queue contract against `factory`. */
export function runReplyQueueContract(
  t: ContractTestApi,
  factory: ReplyQueueFactory,
  options: ReplyQueueContractOptions = {},
): void {
  const skip = options.skip ?? [];
  const open = (leaseMs: number) => async (): Promise<OpenedFixture<ReplyQueueFixture>> => {
    const made = await factory({ leaseMs });
    const fixture: ReplyQueueFixture = 'lease' in made ? { queue: made } : made;
    return { subject: fixture, cleanup: async () => fixture.cleanup?.() };
  };
  const ids = (leased: LeasedReply | null) => leased?.job.id ?? null;

  t.describe('reply queue contract', () => {
    contractGroup(t, 'reply queue', open(LONG_LEASE_MS), skip, (test) => {
      test("hands out one conversation's jobs one at a time, in order", async ({ queue }) => {
        const [a1, a2, a3] = [contractReplyJob('conv_a'), contractReplyJob('conv_a'), contractReplyJob('conv_a')];
        for (const job of [a1!, a2!, a3!]) await queue.enqueue(job);
        const first = await queue.lease(0, CONTRACT_CLAIM);
        t.expect(first?.job).toEqual(a1);
        t.expect(await queue.lease(0, CONTRACT_CLAIM)).toBeNull();
        t.expect(await queue.ack(first!)).toBe(true);
        t.expect(ids(await queue.lease(0, CONTRACT_CLAIM))).toBe(a2!.id);
        t.expect(await queue.size()).toBe(2);
      });

      test('serves other conversations meanwhile, oldest request first', async ({ queue }) => {
        const a1 = contractReplyJob('conv_a');
        const b1 = contractReplyJob('conv_b');
        const a2 = contractReplyJob('conv_a');
        const c1 = contractReplyJob('conv_c');
        for (const job of [a1, b1, a2, c1]) await queue.enqueue(job);
        const leased: Array<LeasedReply | null> = [];
        for (let i = 0; i < 4; i += 1) leased.push(await queue.lease(0, CONTRACT_CLAIM));
        t.expect(leased.map(ids)).toEqual([a1.id, b1.id, c1.id, null]);
      });

      test('keeps the same conversation id of two workspaces apart', async ({ queue }) => {
        const a = contractReplyJob('conv_same');
        const b = contractReplyJob('conv_same', { workspaceId: 'ws_contract_b' });
        await queue.enqueue(a);
        await queue.enqueue(b);
        const got = [ids(await queue.lease(0, CONTRACT_CLAIM)), ids(await queue.lease(0, CONTRACT_CLAIM))];
        t.expect(got).toEqual([a.id, b.id]);
      });

      test('a waiting lease gets a job enqueued while it waits', async ({ queue }) => {
        const job = contractReplyJob('conv_wait');
        const waiting = queue.lease(3_000, CONTRACT_CLAIM);
        await sleep(100);
        await queue.enqueue(job);
        t.expect(ids(await waiting)).toBe(job.id);
      });

      test('acks only with a live receipt, once', async ({ queue }) => {
        await queue.enqueue(contractReplyJob('conv_ack'));
        const leased = await queue.lease(0, CONTRACT_CLAIM);
        t.expect(await queue.ack(leased!)).toBe(true);
        t.expect(await queue.ack(leased!)).toBe(false);
        t.expect(await queue.extend(leased!)).toBe(false);
        t.expect(await queue.size()).toBe(0);
        t.expect(await queue.lease(0, CONTRACT_CLAIM)).toBeNull();
      });

      test("counts one conversation's jobs waiting or leased, of its own workspace only", async ({ queue }) => {
        const scope = { workspaceId: 'ws_contract_a' };
        t.expect(await queue.waiting(scope, 'conv_count')).toBe(0);
        await queue.enqueue(contractReplyJob('conv_count'));
        await queue.enqueue(contractReplyJob('conv_count'));
        await queue.enqueue(contractReplyJob('conv_other'));
        await queue.enqueue(contractReplyJob('conv_count', { workspaceId: 'ws_contract_b' }));
        t.expect(await queue.waiting(scope, 'conv_count')).toBe(2);
        const leased = await queue.lease(0, CONTRACT_CLAIM);
        t.expect(leased?.job.conversationId).toBe('conv_count');
        // A leased job is still under way.
        t.expect(await queue.waiting(scope, 'conv_count')).toBe(2);
        t.expect(await queue.ack(leased!)).toBe(true);
        t.expect(await queue.waiting(scope, 'conv_count')).toBe(1);
        t.expect(await queue.waiting({ workspaceId: 'ws_contract_b' }, 'conv_count')).toBe(1);
        t.expect(await queue.waiting({ workspaceId: 'ws_contract_c' }, 'conv_count')).toBe(0);
      });

      test('keeps job fields exactly, including a null inReplyTo', async ({ queue }) => {
        const job = contractReplyJob('conv_null', { inReplyTo: null });
        await queue.enqueue(job);
        t.expect((await queue.lease(0, CONTRACT_CLAIM))?.job).toEqual(job);
      });
    });

    contractGroup(t, 'reply queue routing', open(LONG_LEASE_MS), skip, (test) => {
      const only = (...models: string[]): ReplyClaim => ({ models });

      test('leases only jobs of a model the claim names; others wait for a worker with theirs', async ({ queue }) => {
        const alpha = contractReplyJob('conv_alpha', { model: 'alpha' });
        const beta = contractReplyJob('conv_beta', { model: 'beta' });
        await queue.enqueue(alpha);
        await queue.enqueue(beta);
        t.expect(ids(await queue.lease(0, only('beta')))).toBe(beta.id);
        t.expect(await queue.lease(0, only('beta', 'gamma'))).toBeNull();
        t.expect(await queue.lease(0, only())).toBeNull();
        t.expect((await queue.lease(0, only('gamma', 'alpha')))?.job).toEqual(alpha);
      });

      test('serves the claimed models oldest request first, model names taken as they are', async ({ queue }) => {
        const jobs = [
          contractReplyJob('conv_m1', { model: 'alpha' }),
          contractReplyJob('conv_m2', { model: 'Beta | {x} é' }),
          contractReplyJob('conv_m3', { model: 'alpha' }),
          contractReplyJob('conv_m4', { model: 'alph' }),
        ];
        for (const job of jobs) await queue.enqueue(job);
        const claim = only('alpha', 'Beta | {x} é');
        const leased: Array<LeasedReply | null> = [];
        for (let i = 0; i < 4; i += 1) leased.push(await queue.lease(0, claim));
        t.expect(leased.map(ids)).toEqual([jobs[0]!.id, jobs[1]!.id, jobs[2]!.id, null]);
      });

      test("a head of another model holds its conversation's later jobs behind it", async ({ queue }) => {
        const first = contractReplyJob('conv_held', { model: 'alpha' });
        const second = contractReplyJob('conv_held', { model: 'beta' });
        await queue.enqueue(first);
        await queue.enqueue(second);
        t.expect(await queue.lease(0, only('beta'))).toBeNull();
        const leased = await queue.lease(0, only('alpha'));
        t.expect(ids(leased)).toBe(first.id);
        t.expect(await queue.ack(leased!)).toBe(true);
        t.expect(ids(await queue.lease(0, only('beta')))).toBe(second.id);
      });

      test('askedBefore also leases jobs of any model asked before it', async ({ queue }) => {
        const old = contractReplyJob('conv_old', { model: 'alpha' });
        const recent = contractReplyJob('conv_recent', { model: 'alpha', requestedAt: old.requestedAt + 60_000 });
        await queue.enqueue(recent);
        await queue.enqueue(old);
        const claim = { models: ['beta'], askedBefore: old.requestedAt + 1 };
        t.expect(ids(await queue.lease(0, claim))).toBe(old.id);
        t.expect(await queue.lease(0, claim)).toBeNull();
        t.expect(ids(await queue.lease(0, only('alpha')))).toBe(recent.id);
      });

      test('a job without a model (queued by Parley 0.1) is leased by any claim', async ({ queue }) => {
        const job = contractReplyJob('conv_legacy', { model: '' });
        await queue.enqueue(job);
        t.expect((await queue.lease(0, only('whatever')))?.job).toEqual(job);
      });

      test("reroute frees the conversation for the new model's workers, its job still first", async ({ queue }) => {
        const first = contractReplyJob('conv_moved', { model: 'alpha' });
        const second = contractReplyJob('conv_moved', { model: 'alpha' });
        await queue.enqueue(first);
        await queue.enqueue(second);
        const leased = await queue.lease(0, only('alpha'));
        t.expect(await queue.reroute(leased!, 'beta')).toBe(true);
        t.expect(await queue.reroute(leased!, 'gamma')).toBe(false);
        t.expect(await queue.ack(leased!)).toBe(false);
        t.expect(await queue.extend(leased!)).toBe(false);
        t.expect(await queue.lease(0, only('alpha'))).toBeNull();
        const moved = await queue.lease(0, only('beta'));
        t.expect(moved?.job).toEqual({ ...first, model: 'beta' });
        t.expect(await queue.ack(moved!)).toBe(true);
        t.expect(ids(await queue.lease(0, only('alpha')))).toBe(second.id);
        t.expect(await queue.size()).toBe(1);
      });
    });

    contractGroup(t, 'reply queue cancel', open(LONG_LEASE_MS), skip, (test) => {
      const scopeA = { workspaceId: 'ws_contract_a' };

      test('cancel removes the waiting jobs of one conversation and nothing else', async ({ queue }) => {
        const [a1, a2] = [contractReplyJob('conv_stop'), contractReplyJob('conv_stop')];
        const other = contractReplyJob('conv_keep');
        const elsewhere = contractReplyJob('conv_stop', { workspaceId: 'ws_contract_b' });
        for (const job of [a1, other, a2, elsewhere]) await queue.enqueue(job);
        t.expect(await queue.cancel(scopeA, 'conv_stop')).toEqual({ removed: [a1, a2], running: [] });
        t.expect(await queue.size()).toBe(2);
        const leased = [await queue.lease(0, CONTRACT_CLAIM), await queue.lease(0, CONTRACT_CLAIM)];
        t.expect(leased.map(ids)).toEqual([other.id, elsewhere.id]);
        t.expect(leased.map((lease) => lease?.cancelled ?? false)).toEqual([false, false]);
        t.expect(await queue.cancel(scopeA, 'conv_stop')).toEqual({ removed: [], running: [] });
        t.expect(await queue.cancel(scopeA, 'conv_never')).toEqual({ removed: [], running: [] });
      });

      test('cancel marks the leased job for its worker, keeping it (and its conversation) until acked', async ({
        queue,
      }) => {
        const [a1, a2] = [contractReplyJob('conv_run'), contractReplyJob('conv_run')];
        const b1 = contractReplyJob('conv_busy');
        for (const job of [a1, a2, b1]) await queue.enqueue(job);
        const running = await queue.lease(0, CONTRACT_CLAIM);
        const busy = await queue.lease(0, CONTRACT_CLAIM);
        t.expect([ids(running), ids(busy)]).toEqual([a1.id, b1.id]);
        t.expect(await queue.cancelled([running!, busy!])).toEqual([]);
        t.expect(await queue.cancel(scopeA, 'conv_run')).toEqual({ removed: [a2], running: [a1] });
        t.expect(await queue.cancelled([running!, busy!])).toEqual([running!.receipt]);
        // A second cancel has nothing new to stop.
        t.expect(await queue.cancel(scopeA, 'conv_run')).toEqual({ removed: [], running: [] });
        t.expect(await queue.extend(running!)).toBe(true);
        // Asked after the cancel: not cancelled, and made after the stopped reply is acked.
        const a3 = contractReplyJob('conv_run');
        await queue.enqueue(a3);
        t.expect(await queue.lease(0, CONTRACT_CLAIM)).toBeNull();
        t.expect(await queue.size()).toBe(3);
        t.expect(await queue.ack(running!)).toBe(true);
        t.expect(await queue.cancelled([running!])).toEqual([]);
        const next = await queue.lease(0, CONTRACT_CLAIM);
        t.expect(next?.job).toEqual(a3);
        t.expect(next?.cancelled ?? false).toBe(false);
        t.expect(await queue.cancelled([next!])).toEqual([]);
      });
    });

    contractGroup(t, 'reply queue leases', open(SHORT_LEASE_MS), skip, (test) => {
      test('a cancelled job whose worker died is handed out again marked cancelled', async ({ queue }) => {
        const job = contractReplyJob('conv_dead');
        await queue.enqueue(job);
        const first = await queue.lease(0, CONTRACT_CLAIM);
        t.expect((await queue.cancel({ workspaceId: job.workspaceId }, 'conv_dead')).running).toEqual([job]);
        await sleep(SHORT_LEASE_MS + 200);
        t.expect(await queue.cancelled([first!])).toEqual([]);
        const again = await queue.lease(1_000, CONTRACT_CLAIM);
        t.expect(again?.job).toEqual(job);
        t.expect(again?.cancelled).toBe(true);
        t.expect(await queue.ack(again!)).toBe(true);
        t.expect(await queue.size()).toBe(0);
      });

      test('cancel removes a job whose lease ended', async ({ queue }) => {
        const [job, next] = [contractReplyJob('conv_ended'), contractReplyJob('conv_ended')];
        await queue.enqueue(job);
        await queue.enqueue(next);
        const leased = await queue.lease(0, CONTRACT_CLAIM);
        await sleep(SHORT_LEASE_MS + 200);
        t.expect(await queue.cancel({ workspaceId: job.workspaceId }, 'conv_ended')).toEqual({
          removed: [job, next],
          running: [],
        });
        t.expect(await queue.ack(leased!)).toBe(false);
        t.expect(await queue.lease(0, CONTRACT_CLAIM)).toBeNull();
        t.expect(await queue.size()).toBe(0);
      });

      test('hands a job out again once its lease ends unrenewed; the old receipt is dead', async ({ queue }) => {
        const job = contractReplyJob('conv_lost');
        await queue.enqueue(job);
        const first = await queue.lease(0, CONTRACT_CLAIM);
        await sleep(SHORT_LEASE_MS + 200);
        const again = await queue.lease(1_000, CONTRACT_CLAIM);
        t.expect(ids(again)).toBe(job.id);
        t.expect(await queue.ack(first!)).toBe(false);
        t.expect(await queue.ack(again!)).toBe(true);
      });

      test('extend keeps a lease alive past its length', async ({ queue }) => {
        await queue.enqueue(contractReplyJob('conv_extend'));
        const leased = await queue.lease(0, CONTRACT_CLAIM);
        for (let i = 0; i < 4; i += 1) {
          await sleep(SHORT_LEASE_MS / 2);
          t.expect(await queue.extend(leased!)).toBe(true);
        }
        t.expect(await queue.lease(0, CONTRACT_CLAIM)).toBeNull();
        t.expect(await queue.ack(leased!)).toBe(true);
      });
    });

    contractGroup(t, 'reply queue instances', open(SHORT_LEASE_MS), skip, (test) => {
      test("two instances never hold one conversation at once, and one takes over the other's lost lease", async (fixture) => {
        const other = await fixture.peer!();
        const [a1, a2] = [contractReplyJob('conv_shared'), contractReplyJob('conv_shared')];
        await fixture.queue.enqueue(a1);
        await other.enqueue(a2);
        const held = await fixture.queue.lease(0, CONTRACT_CLAIM);
        t.expect(ids(held)).toBe(a1.id);
        t.expect(await other.lease(0, CONTRACT_CLAIM)).toBeNull();
        const takeover = await other.lease(SHORT_LEASE_MS + 1_500, CONTRACT_CLAIM);
        t.expect(ids(takeover)).toBe(a1.id);
        t.expect(await other.ack(takeover!)).toBe(true);
        t.expect(ids(await fixture.queue.lease(0, CONTRACT_CLAIM))).toBe(a2.id);
      });

      test("a cancel through one instance reaches the other's worker", async (fixture) => {
        const other = await fixture.peer!();
        const job = contractReplyJob('conv_far');
        await fixture.queue.enqueue(job);
        const leased = await other.lease(0, CONTRACT_CLAIM);
        t.expect(ids(leased)).toBe(job.id);
        t.expect(await fixture.queue.cancel({ workspaceId: job.workspaceId }, 'conv_far')).toEqual({
          removed: [],
          running: [job],
        });
        t.expect(await other.cancelled([leased!])).toEqual([leased!.receipt]);
        t.expect(await other.ack(leased!)).toBe(true);
      });

      test("a waiting lease with the job's model gets it at once; one without it keeps waiting", async (fixture) => {
        const other = await fixture.peer!();
        const withoutModel = other.lease(2_500, { models: ['beta'] });
        const withModel = fixture.queue.lease(2_500, { models: ['alpha'] });
        await sleep(100);
        const job = contractReplyJob('conv_routed', { model: 'alpha' });
        const enqueuedAt = Date.now();
        await fixture.queue.enqueue(job);
        const got = await withModel;
        t.expect(ids(got)).toBe(job.id);
        // Within one poll of every adapter (at most a second), not a lease's length.
        t.expect(Date.now() - enqueuedAt < 1_000).toBe(true);
        t.expect(await fixture.queue.ack(got!)).toBe(true);
        t.expect(await withoutModel).toBeNull();
      });
    });
  });
}
