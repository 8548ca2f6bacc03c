/** @module @parley/adapter-redis: Parley's ports on Redis (standalone or Cluster). */
export {};
