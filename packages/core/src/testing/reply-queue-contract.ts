/** @module `runReplyQueueContract`: the reply queue port's contract, run by every reply queue adapter. */
import { randomUUID } from 'node:crypto';
import type { LeasedReply, ReplyJob, ReplyQueue } from '../ports/reply-queue.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** A queue under test, optionally a second instance over the same backend, and its cleanup. */
export interface ReplyQueueFixture {
  queue: ReplyQueue;
  /** Another instance over the same backend (another worker process); leave out and skip `'reply queue instances'` otherwise. */
  peer?: () => ReplyQueue | Promise<ReplyQueue>;
  cleanup?: () => void | Promise<void>;
}

/** Returns a fresh, empty queue with lease `leaseMs`, or a {@link ReplyQueueFixture}. */
export type ReplyQueueFactory = (options: { leaseMs: number }) => ReplyQueue | ReplyQueueFixture | Promise<ReplyQueue | ReplyQueueFixture>;

/** `skip` names opted-out groups (`'reply queue instances'`) or tests (`'reply queue: <title>'`). */
export interface ReplyQueueContractOptions {
  skip?: readonly string[];
}

const SHORT_LEASE_MS = 400;
const LONG_LEASE_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let clock = Date.parse('2026-03-01T09:00:00.000Z');

/** A reply request of conversation `conversationId` (workspace `ws_contract_a` unless given). */
export function contractReplyJob(conversationId: string, overrides: Partial<ReplyJob> = {}): ReplyJob {
  clock += 1;
  return {
    id: `rpl_${randomUUID()}`,
    workspaceId: 'ws_contract_a',
    conversationId,
    inReplyTo: `msg_${randomUUID().slice(0, 8)}`,
    requestedAt: clock,
    ...overrides,
  };
}

/** Runs the reply queue contract against `factory`. */
export function runReplyQueueContract(t: ContractTestApi, factory: ReplyQueueFactory, options: ReplyQueueContractOptions = {}): void {
  const skip = options.skip ?? [];
  const open =
    (leaseMs: number) =>
    async (): Promise<OpenedFixture<ReplyQueueFixture>> => {
      const made = await factory({ leaseMs });
      const fixture: ReplyQueueFixture = 'lease' in made ? { queue: made } : made;
      return { subject: fixture, cleanup: async () => fixture.cleanup?.() };
    };
  const ids = (leased: LeasedReply | null) => leased?.job.id ?? null;

  t.describe('reply queue contract', () => {
    contractGroup(t, 'reply queue', open(LONG_LEASE_MS), skip, (test) => {
      test('hands out one conversation\'s jobs one at a time, in order', async ({ queue }) => {
        const [a1, a2, a3] = [contractReplyJob('conv_a'), contractReplyJob('conv_a'), contractReplyJob('conv_a')];
        for (const job of [a1!, a2!, a3!]) await queue.enqueue(job);
        const first = await queue.lease(0);
        t.expect(first?.job).toEqual(a1);
        t.expect(await queue.lease(0)).toBeNull();
        t.expect(await queue.ack(first!)).toBe(true);
        t.expect(ids(await queue.lease(0))).toBe(a2!.id);
        t.expect(await queue.size()).toBe(2);
      });

      test('serves other conversations meanwhile, oldest request first', async ({ queue }) => {
        const a1 = contractReplyJob('conv_a');
        const b1 = contractReplyJob('conv_b');
        const a2 = contractReplyJob('conv_a');
        const c1 = contractReplyJob('conv_c');
        for (const job of [a1, b1, a2, c1]) await queue.enqueue(job);
        const leased = [await queue.lease(0), await queue.lease(0), await queue.lease(0), await queue.lease(0)];
        t.expect(leased.map(ids)).toEqual([a1.id, b1.id, c1.id, null]);
      });

      test('keeps the same conversation id of two workspaces apart', async ({ queue }) => {
        const a = contractReplyJob('conv_same');
        const b = contractReplyJob('conv_same', { workspaceId: 'ws_contract_b' });
        await queue.enqueue(a);
        await queue.enqueue(b);
        const got = [ids(await queue.lease(0)), ids(await queue.lease(0))];
        t.expect(got).toEqual([a.id, b.id]);
      });

      test('a waiting lease gets a job enqueued while it waits', async ({ queue }) => {
        const job = contractReplyJob('conv_wait');
        const waiting = queue.lease(3_000);
        await sleep(100);
        await queue.enqueue(job);
        t.expect(ids(await waiting)).toBe(job.id);
      });

      test('acks only with a live receipt, once', async ({ queue }) => {
        await queue.enqueue(contractReplyJob('conv_ack'));
        const leased = await queue.lease(0);
        t.expect(await queue.ack(leased!)).toBe(true);
        t.expect(await queue.ack(leased!)).toBe(false);
        t.expect(await queue.extend(leased!)).toBe(false);
        t.expect(await queue.size()).toBe(0);
        t.expect(await queue.lease(0)).toBeNull();
      });

      test('keeps job fields exactly, including a null inReplyTo', async ({ queue }) => {
        const job = contractReplyJob('conv_null', { inReplyTo: null });
        await queue.enqueue(job);
        t.expect((await queue.lease(0))?.job).toEqual(job);
      });
    });

    contractGroup(t, 'reply queue leases', open(SHORT_LEASE_MS), skip, (test) => {
      test('hands a job out again once its lease ends unrenewed; the old receipt is dead', async ({ queue }) => {
        const job = contractReplyJob('conv_lost');
        await queue.enqueue(job);
        const first = await queue.lease(0);
        await sleep(SHORT_LEASE_MS + 200);
        const again = await queue.lease(1_000);
        t.expect(ids(again)).toBe(job.id);
        t.expect(await queue.ack(first!)).toBe(false);
        t.expect(await queue.ack(again!)).toBe(true);
      });

      test('extend keeps a lease alive past its length', async ({ queue }) => {
        await queue.enqueue(contractReplyJob('conv_extend'));
        const leased = await queue.lease(0);
        for (let i = 0; i < 4; i += 1) {
          await sleep(SHORT_LEASE_MS / 2);
          t.expect(await queue.extend(leased!)).toBe(true);
        }
        t.expect(await queue.lease(0)).toBeNull();
        t.expect(await queue.ack(leased!)).toBe(true);
      });
    });

    contractGroup(t, 'reply queue instances', open(SHORT_LEASE_MS), skip, (test) => {
      test('two instances never hold one conversation at once, and one takes over the other\'s lost lease', async (fixture) => {
        const other = await fixture.peer!();
        const [a1, a2] = [contractReplyJob('conv_shared'), contractReplyJob('conv_shared')];
        await fixture.queue.enqueue(a1);
        await other.enqueue(a2);
        const held = await fixture.queue.lease(0);
        t.expect(ids(held)).toBe(a1.id);
        t.expect(await other.lease(0)).toBeNull();
        const takeover = await other.lease(SHORT_LEASE_MS + 1_500);
        t.expect(ids(takeover)).toBe(a1.id);
        t.expect(await other.ack(takeover!)).toBe(true);
        t.expect(ids(await fixture.queue.lease(0))).toBe(a2.id);
      });
    });
  });
}
