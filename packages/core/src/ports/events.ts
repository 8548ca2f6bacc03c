/** @module The domain-event port: where services announce what changed. */
import type { DomainEvent } from '../types.js';

/**
 * Receives every domain event (decisions §8) after the change it describes is stored.
 * Implementations queue events for webhook delivery; `publish` resolves once the event is
 * accepted (durably, for adapters that claim durability). A rejection propagates to the caller.
 */
export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}
