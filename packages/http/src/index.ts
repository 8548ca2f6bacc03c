/** @module @parley/http: Parley's HTTP API as a Hono app. */
export {};
