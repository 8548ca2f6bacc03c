/** @module Domain events kept in this process's memory. */
import type { DomainEvent, EventPublisher } from '@parley/core';

/** Called with every published event, in publish order. */
export type EventListener = (event: DomainEvent) => void;

/**
 * {@link EventPublisher} that keeps the most recent `capacity` events (default 1 000) and calls
 * subscribed listeners synchronously. Not durable: events are lost when the process exits.
 */
export class MemoryEventPublisher implements EventPublisher {
  private readonly recent: DomainEvent[] = [];
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly capacity = 1_000) {}

  async publish(event: DomainEvent): Promise<void> {
    this.recent.push(structuredClone(event));
    if (this.recent.length > this.capacity) this.recent.shift();
    for (const listener of this.listeners) listener(structuredClone(event));
  }

  /** The kept events, oldest first (copies). */
  events(): DomainEvent[] {
    return this.recent.map((event) => structuredClone(event));
  }

  /** Registers a listener; returns a function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
