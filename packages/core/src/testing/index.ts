/** @module Contract suites adapters run against themselves. */
export {};
