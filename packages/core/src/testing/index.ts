/** @module @parley/core/testing: contract suites adapters run against themselves, and test helpers. */
export * from './clock.js';
export * from './rate-limit-contract.js';
