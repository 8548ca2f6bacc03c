/**
 * @module DeliveryWorker on the memory adapters with real receivers on loopback: fan-out and
 * filtering, signatures, retries, Retry-After, giving up, 410 and 5-day disabling, busy endpoints.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type Adapters, type Core, type CoreWorkers, type EventType } from '../index.js';
import type { DeliveryLane, DeliveryQueue } from '../ports/delivery-queue.js';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { eventually, startReceiver, verifyHeaders, type Receiver } from '../testing/receiver.js';
import type { DeliveryAttemptReport, DeliveryWorkerOptions } from './delivery-worker.js';
import { undiciTransport } from './undici-transport.js';

const WS = 'ws1';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const cleanup: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Setup {
  core: Core;
  worker: CoreWorkers;
}

function setup(
  options: {
    delays?: number[];
    transportTimeoutMs?: number;
    concurrency?: { first?: number; retry?: number };
    onAttempt?: DeliveryWorkerOptions['onAttempt'];
    adapters?: Adapters;
  } = {},
): Setup {
  const transport = undiciTransport({
    allowPrivate: true,
    ...(options.transportTimeoutMs && { timeoutMs: options.transportTimeoutMs }),
  });
  const core = createCore(options.adapters ?? memoryAdapters(), {
    allowPrivateWebhookUrls: true,
    hostResolver: new StaticHostResolver(),
    webhookTransport: transport,
    webhookRetryDelays: options.delays ?? [0.05, 0.05],
    workers: {
      relay: { pollMs: 50 },
      delivery: { pollMs: 50, ...(options.concurrency && { concurrency: options.concurrency }) },
      ...(options.onAttempt && { onDeliveryAttempt: options.onAttempt }),
    },
  });
  const worker = core.workers;
  worker.start();
  cleanup.push(() => transport.close());
  cleanup.push(() => worker.stop());
  return { core, worker };
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  cleanup.push(() => started.close());
  return started;
}

async function endpoint(core: Core, url: string, events: EventType[]) {
  return core.webhooks.create(
    { workspaceId: WS },
    { url, events: events as [EventType, ...EventType[]], secret: SECRET },
  );
}

const agentInput = { name: 'Ada', description: 'Answers', model: 'modelA-4' } as const;

/**
 * The memory adapters, their queue calling `onPutOff` on every `retry()`: with receivers that
 * answer 2xx or hang, each one is a job put off because its endpoint was busy.
 */
function reportingPutOffs(onPutOff: () => void): Adapters {
  const adapters = memoryAdapters();
  const queue = adapters.deliveryQueue;
  adapters.deliveryQueue = {
    enqueue: (jobs) => queue.enqueue(jobs),
    lease: (lane, max, waitMs) => queue.lease(lane, max, waitMs),
    ack: (leased) => queue.ack(leased),
    stats: () => queue.stats(),
    retry(leased, next, dueAt) {
      onPutOff();
      return queue.retry(leased, next, dueAt);
    },
  };
  return adapters;
}

describe('DeliveryWorker', () => {
  it('delivers every event type, signed (standardwebhooks verifies), with the payload {type, timestamp, data}', async () => {
    const { core } = setup();
    const target = await receiver();
    await endpoint(core, target.url, [
      'agent.created',
      'agent.updated',
      'agent.deleted',
      'conversation.started',
      'conversation.completed',
      'message.sent',
      'message.received',
    ]);
    const agent = await core.agents.create({ workspaceId: WS }, agentInput);
    await core.agents.update({ workspaceId: WS }, agent.id, { name: 'Ada 2' });
    const conversation = await core.conversations.create({ workspaceId: WS }, { agentId: agent.id });
    const sent = await core.conversations.sendMessage({ workspaceId: WS }, conversation.id, {
      role: 'user',
      content: 'Hi',
    });
    await core.conversations.sendMessage({ workspaceId: WS }, conversation.id, { role: 'assistant', content: 'Hello' });
    await core.conversations.update({ workspaceId: WS }, conversation.id, { status: 'completed' });
    await core.agents.delete({ workspaceId: WS }, agent.id);
    await target.waitFor(7);
    const verifier = new Webhook(SECRET);
    for (const received of target.received)
      expect(() => verifier.verify(received.body, verifyHeaders(received))).not.toThrow();
    expect(new Set(target.received.map((received) => received.json.type))).toEqual(
      new Set([
        'agent.created',
        'agent.updated',
        'agent.deleted',
        'conversation.started',
        'conversation.completed',
        'message.sent',
        'message.received',
      ]),
    );
    const message = target.received.find((received) => received.json.type === 'message.sent')!;
    expect(message.json).toEqual({ type: 'message.sent', timestamp: expect.any(String), data: sent });
    expect(message.id).toMatch(/^evt_/);
    expect((await core.events.get({ workspaceId: WS }, message.id)).data).toEqual(sent);
  });

  it('sends each endpoint only the types it subscribes to, and nothing to disabled endpoints', async () => {
    const { core } = setup();
    const [agents, messages, disabled] = await Promise.all([receiver(), receiver(), receiver()]);
    await endpoint(core, agents.url, ['agent.created']);
    await endpoint(core, messages.url, ['message.sent']);
    const off = await endpoint(core, disabled.url, ['agent.created', 'message.sent']);
    await core.webhooks.update({ workspaceId: WS }, off.id, { enabled: false });
    const agent = await core.agents.create({ workspaceId: WS }, agentInput);
    const conversation = await core.conversations.create({ workspaceId: WS }, { agentId: agent.id });
    await core.conversations.sendMessage({ workspaceId: WS }, conversation.id, { role: 'user', content: 'Hi' });
    await Promise.all([agents.waitFor(1), messages.waitFor(1)]);
    // A later event reaching its receiver shows the earlier ones were handed out already.
    await core.agents.create({ workspaceId: WS }, agentInput);
    await agents.waitFor(2);
    expect(agents.received.map((received) => received.json.type)).toEqual(['agent.created', 'agent.created']);
    expect(messages.received.map((received) => received.json.type)).toEqual(['message.sent']);
    expect(disabled.received).toEqual([]);
  });

  it('delivers every event type, present and future, to an endpoint subscribed to ["*"]', async () => {
    const { core } = setup();
    const [all, one] = await Promise.all([receiver(), receiver()]);
    const hook = await core.webhooks.create({ workspaceId: WS }, { url: all.url, events: ['*'], secret: SECRET });
    expect(hook.events).toEqual(['*']);
    await endpoint(core, one.url, ['agent.updated']);
    const agent = await core.agents.create({ workspaceId: WS }, agentInput);
    await core.agents.update({ workspaceId: WS }, agent.id, { name: 'Ada 2' });
    const conversation = await core.conversations.create({ workspaceId: WS }, { agentId: agent.id });
    await core.conversations.sendMessage({ workspaceId: WS }, conversation.id, { role: 'user', content: 'Hi' });
    await all.waitFor(4);
    await one.waitFor(1);
    expect(new Set(all.received.map((received) => received.json.type))).toEqual(
      new Set(['agent.created', 'agent.updated', 'conversation.started', 'message.sent']),
    );
    expect(one.received.map((received) => received.json.type)).toEqual(['agent.updated']);
    expect((await core.webhooks.get({ workspaceId: WS }, hook.id)).events).toEqual(['*']);
  });

  it('gives the last attempt and a success no nextAttemptAt', async () => {
    const { core } = setup({ delays: [0.05] });
    const target = await receiver();
    target.answer = () => ({ status: 500, body: 'no' });
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 2);
    const [last, first] = (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries;
    expect(first!.nextAttemptAt).not.toBeNull();
    expect(last!.nextAttemptAt).toBeNull();
  });

  it('retries a failing receiver with the same webhook-id and logs every attempt', async () => {
    const { core } = setup({ delays: [0.05, 0.05] });
    const target = await receiver();
    target.answer = (_request, index) => (index < 2 ? { status: 500, body: 'not yet' } : 204);
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(3);
    expect(new Set(target.received.map((received) => received.id)).size).toBe(1);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 3);
    const log = (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries;
    expect(log.map((entry) => [entry.attempt, entry.status, entry.trigger])).toEqual([
      [3, 204, 'scheduled'],
      [2, 500, 'scheduled'],
      [1, 500, 'scheduled'],
    ]);
    expect(log[2]).toMatchObject({
      responseBody: 'not yet',
      error: null,
      eventType: 'agent.created',
      eventId: target.received[0]!.id,
    });
    // Each failed attempt's entry says when the next is due (the 50 ms delay ±10 %), and that attempt came then.
    for (const [failed, next] of [
      [log[2]!, log[1]!],
      [log[1]!, log[0]!],
    ] as const) {
      const due = Date.parse(failed.nextAttemptAt!) - Date.parse(failed.createdAt);
      expect(due).toBeGreaterThanOrEqual(45);
      expect(due).toBeLessThanOrEqual(55 + failed.durationMs + 50);
      expect(Date.parse(next.createdAt)).toBeGreaterThanOrEqual(Date.parse(failed.nextAttemptAt!) - 1);
    }
    expect(log[0]!.nextAttemptAt).toBeNull(); // delivered: nothing more is due
    // The run of failures ended with a success.
    expect((await core.storage.webhookEndpoints.get({ workspaceId: WS }, hook.id))!.failingSince).toBeNull();
  });

  it('gives up after the last attempt', async () => {
    const { core } = setup({ delays: [0.05] });
    const target = await receiver();
    target.answer = () => 500;
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(2);
    await eventually(async () => (await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries.length === 2);
    // Another event's delivery (after the schedule of the first ran out) is the only new request.
    target.answer = () => 200;
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(3);
    const stored = await core.storage.webhookEndpoints.get({ workspaceId: WS }, hook.id);
    expect(stored).toMatchObject({ enabled: true, failingSince: null });
  });

  it('stops retrying an event whose type the endpoint no longer subscribes to', async () => {
    const { core } = setup({ delays: [0.3, 0.3] });
    const target = await receiver();
    target.answer = () => 500;
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(1);
    await core.webhooks.update({ workspaceId: WS }, hook.id, { events: ['agent.deleted'] });
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(target.received).toHaveLength(1);
  });

  it('waits for a later Retry-After of a 503', async () => {
    const { core } = setup({ delays: [0.05] });
    const target = await receiver();
    target.answer = (_request, index) => (index === 0 ? { status: 503, headers: { 'retry-after': '1' } } : 200);
    await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(2);
    expect(target.received[1]!.at - target.received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('reports each settled attempt to onAttempt: retry_scheduled, then given_up, lag only for the first; a throwing hook changes nothing', async () => {
    const reports: DeliveryAttemptReport[] = [];
    const { core } = setup({
      delays: [0.05],
      onAttempt: (report) => {
        reports.push(report);
        throw new Error('a broken metrics hook');
      },
    });
    const target = await receiver();
    target.answer = () => 500;
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(() => reports.length === 2);
    expect(reports.map((report) => report.outcome)).toEqual(['retry_scheduled', 'given_up']);
    expect(reports[0]).toMatchObject({
      trigger: 'scheduled',
      durationMs: expect.any(Number),
      lagMs: expect.any(Number),
    });
    expect(reports[1]!.lagMs).toBeUndefined();
    expect((await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries).toHaveLength(2);
    target.answer = () => 410;
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(() => reports.length === 3);
    expect(reports[2]!.outcome).toBe('endpoint_disabled');
  });

  it('disables an endpoint that answers 410 Gone at once, and stops sending to it', async () => {
    const { core } = setup({ delays: [0.05, 0.05] });
    const target = await receiver();
    target.answer = () => 410;
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(1);
    await eventually(async () => !(await core.webhooks.get({ workspaceId: WS }, hook.id)).enabled);
    expect(await core.webhooks.get({ workspaceId: WS }, hook.id)).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    await core.agents.create({ workspaceId: WS }, agentInput);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(1);
  });

  it('marks the start of a run of failures, and disables an endpoint failing for 5 days', async () => {
    const { core } = setup({ delays: [30] });
    const target = await receiver();
    target.answer = () => 500;
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(
      async () => (await core.storage.webhookEndpoints.get({ workspaceId: WS }, hook.id))!.failingSince !== null,
    );
    expect(await core.webhooks.get({ workspaceId: WS }, hook.id)).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    // Pretend the run started 5 days ago: the next failure disables.
    const fiveDaysAgo = new Date(Date.now() - 5 * 24 * 3600 * 1000 - 1000).toISOString();
    await core.storage.webhookEndpoints.update({ workspaceId: WS }, hook.id, { set: { failingSince: fiveDaysAgo } });
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(async () => !(await core.webhooks.get({ workspaceId: WS }, hook.id)).enabled);
    expect(await core.webhooks.get({ workspaceId: WS }, hook.id)).toMatchObject({
      enabled: false,
      disabledReason: 'failing',
    });
  });

  it('keeps delivering to other endpoints while one receiver hangs', async () => {
    const { core } = setup({ transportTimeoutMs: 60_000, concurrency: { first: 4, retry: 2 } });
    const [hung, healthy] = await Promise.all([receiver(), receiver()]);
    hung.answer = () => 'hang';
    await endpoint(core, hung.url, ['agent.created']);
    await endpoint(core, healthy.url, ['agent.created']);
    for (let index = 0; index < 20; index++) await core.agents.create({ workspaceId: WS }, agentInput);
    await healthy.waitFor(20, 15_000);
    expect(hung.hanging()).toBeGreaterThan(0);
    expect(hung.hanging()).toBeLessThanOrEqual(2);
  });

  it("puts a busy endpoint's jobs off before leasing more, and after a batch it could start nothing of waits before the next lease", async () => {
    // The memory queue, its put-offs slowed to 20 ms, with each lease and put-off timed per lane.
    const adapters = memoryAdapters();
    const queue: DeliveryQueue = adapters.deliveryQueue;
    const laneOf = new Map<string, DeliveryLane>();
    const pending: Record<DeliveryLane, number> = { first: 0, retry: 0 };
    const leases: Array<{ lane: DeliveryLane; at: number; pendingPutOffs: number; jobs: number }> = [];
    const putOffEnds: Array<{ lane: DeliveryLane; at: number }> = [];
    adapters.deliveryQueue = {
      enqueue: (jobs) => queue.enqueue(jobs),
      ack: (leased) => queue.ack(leased),
      stats: () => queue.stats(),
      async lease(lane, max, waitMs) {
        const lease = { lane, at: performance.now(), pendingPutOffs: pending[lane], jobs: 0 };
        leases.push(lease);
        const leased = await queue.lease(lane, max, waitMs);
        for (const item of leased) laneOf.set(item.receipt, lane);
        lease.jobs = leased.length;
        return leased;
      },
      async retry(leased, next, dueAt) {
        const lane = laneOf.get(leased.receipt)!;
        pending[lane] += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        try {
          await queue.retry(leased, next, dueAt);
        } finally {
          pending[lane] -= 1;
          putOffEnds.push({ lane, at: performance.now() });
        }
      },
    };
    const { core } = setup({ adapters, transportTimeoutMs: 60_000, concurrency: { first: 4, retry: 2 } });
    const hung = await receiver();
    hung.answer = () => 'hang';
    await endpoint(core, hung.url, ['agent.created']);
    for (let index = 0; index < 12; index++) await core.agents.create({ workspaceId: WS }, agentInput);
    // Two attempts hang (perEndpoint: half the first lane's 4); the first lane puts the other ten off.
    await eventually(async () => putOffEnds.filter((end) => end.lane === 'first').length >= 10, 10_000);
    const first = leases.filter((lease) => lease.lane === 'first');
    expect(first.filter((lease) => lease.pendingPutOffs > 0)).toEqual([]);
    // A batch of which every job was put off (the endpoint holds its two slots): the next lease waits.
    const putOffsBetween = (from: number, to: number) =>
      putOffEnds.filter((end) => end.lane === 'first' && end.at >= from && end.at <= to);
    let busyBatches = 0;
    for (const [index, lease] of first.entries()) {
      const next = first[index + 1];
      if (lease.jobs === 0 || next === undefined || putOffsBetween(lease.at, next.at).length !== lease.jobs) continue;
      busyBatches += 1;
      expect(next.at - Math.max(...putOffsBetween(lease.at, next.at).map((end) => end.at))).toBeGreaterThanOrEqual(8);
    }
    expect(busyBatches).toBeGreaterThan(2);
  });

  it("hands a busy endpoint's next free slot to a job held for it, instead of putting the job off", async () => {
    let putOffs = 0;
    const adapters = reportingPutOffs(() => (putOffs += 1));
    const { core } = setup({ adapters, transportTimeoutMs: 60_000, concurrency: { first: 4, retry: 2 } });
    const target = await receiver();
    target.answer = () => 'hang';
    await endpoint(core, target.url, ['agent.created']);
    for (let index = 0; index < 8; index++) await core.agents.create({ workspaceId: WS }, agentInput);
    // Two attempts at a time (perEndpoint: half the first lane's 4); the lane holds the next two
    // jobs, and each answer hands its slot to one of them.
    for (let answered = 0; answered < 8; answered += 2) {
      await eventually(
        async () => target.hanging() === 2,
        5_000,
        `attempts ${answered + 1} and ${answered + 2} in flight`,
      );
      await target.release(200);
    }
    await target.waitFor(8);
    expect(new Set(target.received.map((received) => received.id)).size).toBe(8);
    expect(putOffs).toBe(0);
  });

  it('puts a held job off once its endpoint frees no slot in time, and a later one at once', async () => {
    const putOffAt: number[] = [];
    const adapters = reportingPutOffs(() => putOffAt.push(performance.now()));
    const { core } = setup({ adapters, transportTimeoutMs: 60_000, concurrency: { first: 4, retry: 2 } });
    const target = await receiver();
    target.answer = () => 'hang';
    await endpoint(core, target.url, ['agent.created']);
    for (let index = 0; index < 3; index++) await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(async () => target.hanging() === 2, 5_000);
    const hungAt = performance.now();
    // The third job is held for the endpoint's next slot; none frees, so it is put off after ~1 s.
    await eventually(async () => putOffAt.length === 1, 5_000);
    expect(putOffAt[0]! - hungAt).toBeGreaterThanOrEqual(800);
    // Now the endpoint has not moved for over a second: a new job is put off without waiting.
    const createdAt = performance.now();
    await core.agents.create({ workspaceId: WS }, agentInput);
    await eventually(async () => putOffAt.length === 2, 5_000);
    expect(putOffAt[1]! - createdAt).toBeLessThan(500);
    expect(target.hanging()).toBe(2);
  });

  it('stop() finishes the attempt in flight before resolving', async () => {
    const { core, worker } = setup();
    const target = await receiver();
    target.answer = () => 'hang';
    const hook = await endpoint(core, target.url, ['agent.created']);
    await core.agents.create({ workspaceId: WS }, agentInput);
    await target.waitFor(1);
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);
    // The receiver drops the connection: the attempt ends (and is logged), then stop() resolves.
    await target.close();
    await stopping;
    expect((await core.deliveries.list({ workspaceId: WS }, hook.id)).deliveries).toHaveLength(1);
  });
});
