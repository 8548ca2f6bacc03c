/** @module `runDeliveryQueueContract`: the delivery queue port's contract, run by every queue adapter. */
import { randomUUID } from 'node:crypto';
import type {
  DeliveryJob,
  DeliveryLane,
  DeliveryQueue,
  DeliveryQueueStats,
  LeasedJob,
} from '../ports/delivery-queue.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** A queue under test, the instances that share its backend, and what removes its data afterwards. */
export interface DeliveryQueueFixture {
  queue: DeliveryQueue;
  /**
   * Another queue instance over the same backend and lease (on Redis: with its own client), as a
   * second worker process would have; `cleanup` closes it too. An adapter whose backend is the
   * queue object itself (memory) returns that object. Without it, opt out of the group
   * `'delivery queue instances'`.
   */
  peer?: () => DeliveryQueue | Promise<DeliveryQueue>;
  /** Called after each test, also when it failed: closes every instance and removes their data. */
  cleanup?: () => void | Promise<void>;
}

/** What the suite asks of each fresh queue: its lease in ms (short for the lease tests). */
export interface DeliveryQueueFactoryOptions {
  leaseMs: number;
}

/** Returns a fresh, empty queue with lease `leaseMs` for one test, or a {@link DeliveryQueueFixture}. */
export type DeliveryQueueFactory = (
  options: DeliveryQueueFactoryOptions,
) => DeliveryQueue | DeliveryQueueFixture | Promise<DeliveryQueue | DeliveryQueueFixture>;

/**
 * Options of {@link runDeliveryQueueContract}: `skip` names opted-out groups (`'delivery queue
 * instances'`) or tests (`'delivery queue: <title>'`).
 */
export interface DeliveryQueueContractOptions {
  skip?: readonly string[];
}

/** The short lease of the lease tests, and a lease no test outlives. */
const SHORT_LEASE_MS = 800;
const LONG_LEASE_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A job for attempt 1 of a `message.sent` event whose content is not plain ASCII (emoji, a lone surrogate). */
export function contractJob(n: number, overrides: Partial<DeliveryJob> = {}): DeliveryJob {
  const suffix = String(n).padStart(5, '0');
  return {
    id: `job_${suffix}_${randomUUID().slice(0, 8)}`,
    workspaceId: 'ws_contract_a',
    endpointId: `wh_${suffix}`,
    event: {
      id: `evt_01JCONTRACT${suffix}`,
      type: 'message.sent',
      workspaceId: 'ws_contract_a',
      occurredAt: '2026-03-01T09:00:00.000Z',
      data: {
        id: `msg_${suffix}`,
        conversationId: 'conv_contract',
        content: `Hello ${n} 👋 \ud800 "quoted" \\ back`,
        role: 'user',
        metadata: { n, nested: { list: [1, 'two', null] } },
        toolCalls: null,
        toolCallId: null,
        createdAt: '2026-03-01T09:00:00.000Z',
      },
    },
    attempt: 1,
    trigger: 'scheduled',
    // Odd jobs carry a W3C trace context, which every test then checks comes back with the job.
    ...(n % 2 === 1 && { traceContext: `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9${suffix.slice(1)}-01` }),
    ...overrides,
  };
}

/** The job that follows `job` in its schedule. */
const nextOf = (job: DeliveryJob): DeliveryJob => ({
  ...job,
  id: `${job.id}_r${job.attempt + 1}`,
  attempt: job.attempt + 1,
});

const EMPTY: DeliveryQueueStats = { first: 0, retry: 0, scheduled: 0, leased: 0 };

/** Leases from `lane` until it answers `[]` after `waitMs`. */
async function drain(queue: DeliveryQueue, lane: DeliveryLane, max = 100, waitMs = 0): Promise<LeasedJob[]> {
  const all: LeasedJob[] = [];
  for (;;) {
    const batch = await queue.lease(lane, max, waitMs);
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

/** Leases exactly `count` jobs from `lane`, however the adapter splits them into batches. */
async function leaseCount(
  queue: DeliveryQueue,
  lane: DeliveryLane,
  count: number,
  waitMs = 2_000,
): Promise<LeasedJob[]> {
  const all: LeasedJob[] = [];
  while (all.length < count) {
    const batch = await queue.lease(lane, count - all.length, waitMs);
    if (batch.length === 0) break;
    all.push(...batch);
  }
  return all;
}

/** What each test gets: `open(leaseMs)` opens the test's queue (once), cleaned up after the test. */
interface QueueOpener {
  open(leaseMs: number): Promise<DeliveryQueueFixture>;
}

function opener(factory: DeliveryQueueFactory): OpenedFixture<QueueOpener> {
  const opened: DeliveryQueueFixture[] = [];
  return {
    subject: {
      async open(leaseMs) {
        const made = await factory({ leaseMs });
        const fixture: DeliveryQueueFixture = 'queue' in made ? made : { queue: made };
        opened.push(fixture);
        return fixture;
      },
    },
    cleanup: async () => {
      for (const fixture of opened) await fixture.cleanup?.();
    },
  };
}

const ids = (leased: readonly LeasedJob[]) => leased.map((item) => item.job.id);

/**
 * Registers the contract tests of `ports/delivery-queue.ts` with the caller's test runner, e.g.
 * `runDeliveryQueueContract({ describe, it, expect }, ({ leaseMs }) => new MemoryDeliveryQueue({ leaseMs }))`.
 * The suite runs on the real clock: lease tests take a lease of 800 ms and wait for it to run out.
 */
export function runDeliveryQueueContract(
  t: ContractTestApi,
  factory: DeliveryQueueFactory,
  options: DeliveryQueueContractOptions = {},
): void {
  const { expect } = t;
  const skip = options.skip ?? [];
  const open = async () => opener(factory);
  const rejection = async (call: () => Promise<unknown>) => {
    try {
      await call();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  contractGroup(t, 'delivery queue', open, skip, (test) => {
    test('hands out an enqueued job equal to what was enqueued, once, and forgets it on ack', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const [a, b] = [contractJob(1), contractJob(2, { trigger: 'manual' })];
      const expected = structuredClone([a, b]);
      await queue.enqueue([]);
      await queue.enqueue([a, b]);
      a.attempt = 99; // the queue kept its own copy
      expect(await queue.stats()).toEqual({ ...EMPTY, first: 2 });
      const leased = await queue.lease('first', 10, 0);
      expect(leased.map((item) => item.job)).toEqual(expected);
      expect(typeof leased[0]!.receipt).toBe('string');
      expect(leased[0]!.receipt).not.toBe(leased[1]!.receipt);
      expect(await queue.lease('first', 10, 0)).toEqual([]);
      expect(await queue.stats()).toEqual({ ...EMPTY, leased: 2 });
      for (const item of leased) await queue.ack(item);
      expect(await queue.stats()).toEqual(EMPTY);
      expect(await queue.lease('first', 10, 0)).toEqual([]);
    });

    test('hands each job to exactly one of many concurrent callers', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const jobs = Array.from({ length: 300 }, (_, i) => contractJob(i));
      await Promise.all([
        queue.enqueue(jobs.slice(0, 100)),
        queue.enqueue(jobs.slice(100, 200)),
        queue.enqueue(jobs.slice(200)),
      ]);
      const workers = Array.from({ length: 25 }, (_, i) => drain(queue, 'first', 1 + (i % 5), 20));
      const leased = (await Promise.all(workers)).flat();
      expect(ids(leased).sort()).toEqual(jobs.map((job) => job.id).sort());
      expect(new Set(leased.map((item) => item.receipt)).size).toBe(300);
      expect(await queue.stats()).toEqual({ ...EMPTY, leased: 300 });
      await Promise.all(leased.map((item) => queue.ack(item)));
      expect(await queue.stats()).toEqual(EMPTY);
    });

    test('retry schedules the next attempt in the retry lane: not leasable before dueAt, leasable within 1 s after', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const job = contractJob(1);
      await queue.enqueue([job]);
      const [leased] = await queue.lease('first', 1, 0);
      const dueAt = Date.now() + 700;
      await queue.retry(leased!, nextOf(job), dueAt);
      expect(await queue.stats()).toEqual({ ...EMPTY, scheduled: 1 });
      expect(await queue.lease('retry', 1, 0)).toEqual([]);
      expect(await queue.lease('first', 1, 0)).toEqual([]);
      const due = await queue.lease('retry', 1, dueAt - Date.now() + 1_500);
      expect(Date.now() >= dueAt).toBe(true);
      expect(due.map((item) => item.job)).toEqual([nextOf(job)]);
      await queue.ack(due[0]!);
      expect(await queue.stats()).toEqual(EMPTY);
    });

    test('lanes are independent: 1 000 due retries neither come out of nor hold up the first lane', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const jobs = Array.from({ length: 1_000 }, (_, i) => contractJob(i));
      await queue.enqueue(jobs);
      const leased = await leaseCount(queue, 'first', 1_000, 0);
      expect(leased.length).toBe(1_000);
      for (let i = 0; i < leased.length; i += 100) {
        await Promise.all(leased.slice(i, i + 100).map((item) => queue.retry(item, nextOf(item.job), Date.now())));
      }
      const stats = await queue.stats();
      expect({ ...stats, due: stats.retry + stats.scheduled }).toEqual({ ...stats, first: 0, leased: 0, due: 1_000 });
      const fresh = contractJob(5_000);
      await queue.enqueue([fresh]);
      expect((await queue.lease('first', 10, 0)).map((item) => item.job)).toEqual([fresh]);
      expect(await queue.lease('first', 10, 0)).toEqual([]);
      const retries = await leaseCount(queue, 'retry', 1_000);
      expect(ids(retries).sort()).toEqual(jobs.map((job) => nextOf(job).id).sort());
      expect(retries.every((item) => item.job.attempt === 2)).toBe(true);
    });

    test('lease waits up to waitMs, and wakes as soon as a job is enqueued or a retry falls due', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      let started = Date.now();
      expect(await queue.lease('first', 1, 300)).toEqual([]);
      expect(Date.now() - started >= 280).toBe(true);

      const job = contractJob(1);
      started = Date.now();
      const waiting = queue.lease('first', 5, 15_000);
      await sleep(200);
      await queue.enqueue([job]);
      const woken = await waiting;
      expect(woken.map((item) => item.job)).toEqual([job]);
      expect(Date.now() - started < 10_000).toBe(true);

      started = Date.now();
      const waitingRetry = queue.lease('retry', 5, 15_000);
      await queue.retry(woken[0]!, nextOf(job), Date.now() + 300);
      expect((await waitingRetry).map((item) => item.job)).toEqual([nextOf(job)]);
      expect(Date.now() - started < 10_000).toBe(true);
    });

    test('hands out the oldest job first in each lane', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const [a, b, c, d] = [contractJob(1), contractJob(2), contractJob(3), contractJob(4)];
      await queue.enqueue([a]);
      await queue.enqueue([b, c]);
      await queue.enqueue([d]);
      const leased: LeasedJob[] = [];
      for (let i = 0; i < 4; i++) leased.push(...(await queue.lease('first', 1, 0)));
      expect(leased.map((item) => item.job)).toEqual([a, b, c, d]);
      // Scheduled latest-due first: the retry lane orders by due time, not by when retry() was called.
      const start = Date.now();
      for (const [i, item] of leased.entries()) await queue.retry(item, nextOf(item.job), start + 1_300 - i * 100);
      await sleep(start + 1_400 - Date.now());
      const due: LeasedJob[] = [];
      for (let i = 0; i < 4; i++) due.push(...(await queue.lease('retry', 1, 2_000)));
      expect(due.map((item) => item.job)).toEqual([d, c, b, a].map(nextOf));
    });

    test('stats count ready, scheduled and leased jobs; a due retry counts as ready', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      const jobs = [1, 2, 3, 4].map((n) => contractJob(n));
      await queue.enqueue(jobs);
      const [one, two] = await leaseCount(queue, 'first', 2, 0);
      expect(await queue.stats()).toEqual({ first: 2, retry: 0, scheduled: 0, leased: 2 });
      await queue.retry(one!, nextOf(one!.job), Date.now() + 60_000);
      expect(await queue.stats()).toEqual({ first: 2, retry: 0, scheduled: 1, leased: 1 });
      await queue.retry(two!, nextOf(two!.job), Date.now() - 1);
      expect(await queue.stats()).toEqual({ first: 2, retry: 1, scheduled: 1, leased: 0 });
      const [due] = await queue.lease('retry', 5, 2_000);
      expect(due!.job).toEqual(nextOf(two!.job));
      expect(await queue.stats()).toEqual({ first: 2, retry: 0, scheduled: 1, leased: 1 });
      await queue.ack(due!);
      expect(await queue.stats()).toEqual({ first: 2, retry: 0, scheduled: 1, leased: 0 });
    });

    test('refuses a max below 1 or not an integer, and a negative waitMs', async (queues) => {
      const { queue } = await queues.open(LONG_LEASE_MS);
      for (const [max, waitMs] of [
        [0, 0],
        [1.5, 0],
        [1, -1],
      ] as const) {
        expect((await rejection(() => queue.lease('first', max, waitMs))) instanceof RangeError).toBe(true);
      }
    });

    test('hands an unacked job out again once its lease ran out, and not before', async (queues) => {
      const { queue } = await queues.open(SHORT_LEASE_MS);
      const job = contractJob(1);
      await queue.enqueue([job]);
      const leasedAt = Date.now();
      await queue.lease('first', 1, 0);
      expect(await queue.lease('first', 1, 0)).toEqual([]);
      const again = await queue.lease('first', 1, 5_000);
      expect(Date.now() - leasedAt >= SHORT_LEASE_MS - 20).toBe(true);
      expect(again.map((item) => item.job)).toEqual([job]);
      expect(await queue.stats()).toEqual({ ...EMPTY, leased: 1 });
      await queue.ack(again[0]!);
      expect(await queue.stats()).toEqual(EMPTY);
    });

    test('an ack after the lease ran out still removes the job; no later ack or retry brings it back', async (queues) => {
      const { queue } = await queues.open(SHORT_LEASE_MS);
      const job = contractJob(1);
      await queue.enqueue([job]);
      const [lost] = await queue.lease('first', 1, 0);
      const [takenOver] = await queue.lease('first', 1, 5_000);
      expect(takenOver!.job).toEqual(job);
      await queue.ack(lost!); // the first worker finished after all
      await queue.ack(takenOver!);
      await queue.retry(takenOver!, nextOf(job), Date.now());
      await queue.retry(lost!, nextOf(job), Date.now());
      expect(await queue.stats()).toEqual(EMPTY);
      expect(await queue.lease('first', 1, SHORT_LEASE_MS + 400)).toEqual([]);
      expect(await queue.lease('retry', 1, 300)).toEqual([]);
    });

    test('retry acks the old lease in the same step: one of many retries of a lease schedules, none resurrects it', async (queues) => {
      const { queue } = await queues.open(SHORT_LEASE_MS);
      const job = contractJob(1);
      await queue.enqueue([job]);
      const [leased] = await queue.lease('first', 1, 0);
      const dueAt = Date.now() + 60_000;
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => queue.retry(leased!, { ...nextOf(job), id: `${job.id}_${i}` }, dueAt)),
      );
      expect(await queue.stats()).toEqual({ ...EMPTY, scheduled: 1 });
      await queue.ack(leased!);
      expect(await queue.stats()).toEqual({ ...EMPTY, scheduled: 1 });
      expect(await queue.lease('first', 1, SHORT_LEASE_MS + 400)).toEqual([]);
    });
  });

  contractGroup(t, 'delivery queue instances', open, skip, (test) => {
    test('share the work, each job going to one of them', async (queues) => {
      const { queue, peer } = await queues.open(LONG_LEASE_MS);
      const other = await peer!();
      const jobs = Array.from({ length: 60 }, (_, i) => contractJob(i));
      await queue.enqueue(jobs.slice(0, 30));
      await other.enqueue(jobs.slice(30));
      const [mine, theirs] = await Promise.all([drain(queue, 'first', 3, 20), drain(other, 'first', 4, 20)]);
      expect([...ids(mine), ...ids(theirs)].sort()).toEqual(jobs.map((job) => job.id).sort());
      // A receipt is good on every instance, and a waiting instance wakes for another's enqueue.
      for (const item of mine) await other.ack(item);
      for (const item of theirs) await queue.ack(item);
      const waiting = other.lease('first', 1, 15_000);
      await sleep(100);
      await queue.enqueue([contractJob(99)]);
      expect((await waiting).length).toBe(1);
      expect(await queue.stats()).toEqual({ ...EMPTY, leased: 1 });
    });
    test('another instance takes over a job whose lease ran out', async (queues) => {
      const { queue, peer } = await queues.open(SHORT_LEASE_MS);
      const other = await peer!();
      const job = contractJob(1);
      await queue.enqueue([job]);
      const [abandoned] = await queue.lease('first', 1, 0);
      expect(await other.lease('first', 1, 0)).toEqual([]);
      const [takenOver] = await other.lease('first', 1, 5_000);
      expect(takenOver!.job).toEqual(abandoned!.job);
      await other.ack(takenOver!);
      expect(await queue.stats()).toEqual(EMPTY);
    });
  });
}
