/**
 * @module The outbox relay on memory storage (30 s outbox lease): a batch whose consumer failed is
 * tried again in hand about a second later, not after its lease; one that keeps failing is left to
 * its lease after three retries, and the relay goes on with the other workspaces.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxBatch } from '../ports/storage.js';
import { eventually, Records } from '../testing/index.js';
import { OutboxRelay, type OutboxConsumer } from './outbox-relay.js';

/** A consumer that records every batch it is given and throws while `failing(batch)` says so. */
function consumer(failing: (batch: OutboxBatch, seen: number) => boolean) {
  const seen: OutboxBatch[] = [];
  const handed: OutboxConsumer = {
    name: 'test',
    async consume(batch) {
      seen.push(batch);
      if (failing(batch, seen.filter((earlier) => earlier.receipt === batch.receipt).length))
        throw new Error('consumer down');
      return batch.events.length;
    },
  };
  return { handed, seen };
}

describe('OutboxRelay', () => {
  const relays: OutboxRelay[] = [];
  afterEach(async () => {
    await Promise.all(relays.map((relay) => relay.stop()));
    relays.length = 0;
  });

  it('tries a batch whose consumer failed again in hand, a second apart, and acknowledges it once it went through', async () => {
    const { storage } = memoryAdapters();
    const [event] = await new Records().insertAgentsWithEvents(storage, 'ws_a', 1);
    const { handed, seen } = consumer((_batch, times) => times <= 2);
    const relay = new OutboxRelay(storage, [handed], { pollMs: 50 });
    relays.push(relay);
    const started = Date.now();
    relay.start();
    await eventually(() => seen.length === 3, 10_000, 'the third try');
    // Well inside the 30 s lease: the same batch, from this process's hand.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(seen.map((batch) => batch.events.map(({ id }) => id))).toEqual([[event!.id], [event!.id], [event!.id]]);
    expect(new Set(seen.map((batch) => batch.receipt)).size).toBe(1);
    await relay.stop();
    // Acknowledged: nothing is left to take.
    expect(await storage.outbox.take(10, 0)).toBeNull();
  });

  it('leaves a batch that keeps failing to its lease after three retries and relays the other workspaces', async () => {
    const { storage } = memoryAdapters();
    const records = new Records();
    const [poisoned] = await records.insertAgentsWithEvents(storage, 'ws_a', 1);
    const [other] = await records.insertAgentsWithEvents(storage, 'ws_b', 1);
    const { handed, seen } = consumer((batch) => batch.workspaceId === 'ws_a');
    const relay = new OutboxRelay(storage, [handed], { pollMs: 50 });
    relays.push(relay);
    relay.start();
    await eventually(() => seen.some((batch) => batch.workspaceId === 'ws_b'), 15_000, 'the other workspace');
    const tries = seen.filter((batch) => batch.workspaceId === 'ws_a');
    expect(tries).toHaveLength(4);
    expect(tries.every((batch) => batch.events[0]!.id === poisoned!.id)).toBe(true);
    expect(seen.at(-1)!.events.map(({ id }) => id)).toEqual([other!.id]);
    await relay.stop();
    // ws_a's batch is still leased (to nobody alive here) and unacknowledged; ws_b's is acknowledged.
    expect(await storage.outbox.take(10, 0)).toBeNull();
  });
});
