/** @module The memory storage adapter against the storage port's contract, and its own settings. */
import { ManualClock, Records, runStorageContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './memory-storage.js';

runStorageContract({ describe, it, expect }, (options) => new MemoryStorage(options));

describe('MemoryStorage settings', () => {
  it('refuses a retention or lease that is not a positive number of ms', () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => new MemoryStorage({ eventRetentionMs: bad })).toThrow(RangeError);
      expect(() => new MemoryStorage({ outboxLeaseMs: bad })).toThrow(RangeError);
    }
  });

  it('measures retention and leases with the given clock; an outbox nobody takes from drops what expired', async () => {
    const clock = new ManualClock();
    const storage = new MemoryStorage({ clock, eventRetentionMs: 60_000, outboxLeaseMs: 1_000 });
    const records = new Records();
    const old = await records.insertAgent(storage, 'ws');
    const batch = (await storage.outbox.take(10, 0))!;
    expect(batch.events.map((event) => (event.data as { id: string }).id)).toEqual([old.id]);
    // The lease runs on the injected clock: no real time needs to pass.
    expect(await storage.outbox.take(10, 0)).toBeNull();
    clock.advance(1_001);
    expect((await storage.outbox.take(10, 0))?.events).toEqual(batch.events);
    clock.advance(60_000);
    const fresh = await records.insertAgent(storage, 'ws');
    expect(await storage.events.get({ workspaceId: 'ws' }, batch.events[0]!.id)).toBeNull();
    // The expired event left the outbox with the log; only the fresh one is handed out.
    expect((await storage.outbox.take(10, 0))?.events.map((event) => (event.data as { id: string }).id)).toEqual([
      fresh.id,
    ]);
  });
});
