/** @module MemoryEventPublisher: the kept window of recent events, copies, and listeners. */
import type { DomainEvent } from '@parley/core';
import { describe, expect, it } from 'vitest';
import { MemoryEventPublisher } from './memory-events.js';

function event(n: number): DomainEvent {
  return {
    id: `evt_${n}`,
    type: 'conversation.started',
    workspaceId: 'ws1',
    occurredAt: '2026-01-01T00:00:00.000Z',
    data: { id: `conv_${n}`, agentId: 'agt_1', userId: null, metadata: { n }, status: 'active', createdAt: '2026-01-01T00:00:00.000Z' },
  };
}

describe('MemoryEventPublisher', () => {
  it('keeps the most recent `capacity` events, oldest first', async () => {
    const publisher = new MemoryEventPublisher(3);
    for (let n = 1; n <= 5; n++) await publisher.publish(event(n));
    expect(publisher.events().map((kept) => kept.id)).toEqual(['evt_3', 'evt_4', 'evt_5']);
  });

  it('keeps and hands out copies: mutating a published or returned event changes nothing kept', async () => {
    const publisher = new MemoryEventPublisher();
    const published = event(1);
    await publisher.publish(published);
    published.workspaceId = 'mutated';
    publisher.events()[0]!.type = 'conversation.completed';
    expect(publisher.events()).toEqual([event(1)]);
  });

  it('calls listeners synchronously in publish order, each with its own copy, until unsubscribed', async () => {
    const publisher = new MemoryEventPublisher();
    const seen: string[] = [];
    const unsubscribe = publisher.subscribe((received) => {
      seen.push(received.id);
      received.id = 'mutated';
    });
    const pending = publisher.publish(event(1));
    expect(seen).toEqual(['evt_1']);
    await pending;
    await publisher.publish(event(2));
    unsubscribe();
    await publisher.publish(event(3));
    expect(seen).toEqual(['evt_1', 'evt_2']);
    expect(publisher.events().map((kept) => kept.id)).toEqual(['evt_1', 'evt_2', 'evt_3']);
  });
});
