/** @module The workers a core runs: the outbox relay and its consumers. */
export * from './outbox-relay.js';
export * from './webhook-fan-out.js';
