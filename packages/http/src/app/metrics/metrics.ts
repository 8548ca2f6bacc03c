/**
 * @module Parley's Prometheus metrics (prom-client): one registry per server, so tests and
 * several servers in one process never share or collide on counters. What each metric means is
 * documented in docs/operations.md.
 */
import { DELIVERY_OUTCOMES, REPLY_OUTCOMES, type DeliveryAttemptReport } from '@parley/core';
import type { DeliveryQueue } from '@parley/core/adapter';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds buckets of `parley_http_request_duration_seconds`: 5 ms to 10 s. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds buckets of the delivery histograms: 10 ms (a fast receiver) to 15 min (a backlog). */
const DELIVERY_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 15, 60, 300, 900];

/** What a node-postgres `pg.Pool` counts: connections open, idle, and callers waiting for one. */
export interface DatabasePoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * The delivery queue whose depth `parley_delivery_queue_jobs{state}` reports, read with
   * `stats()` at each scrape; absent, the gauge is not registered.
   */
  deliveryQueue?: DeliveryQueue;
  /**
   * The PostgreSQL connection pool (node-postgres `pg.Pool`'s counts) whose connections
   * `parley_database_pool_connections{state}` reports at each scrape; absent, not registered.
   */
  databasePool?: DatabasePoolCounts | null;
  /** Also collect prom-client's process metrics (CPU, memory, event-loop lag); default true. */
  processMetrics?: boolean;
}

/** A server's metrics: the registry `/metrics` renders and the instruments Parley updates. */
export interface ParleyMetrics {
  registry: Registry;
  /** `parley_http_requests_total{method, route, status}`: `route` is the matched route template. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** `parley_http_request_duration_seconds{method, route}`. */
  httpDuration: Histogram<'method' | 'route'>;
  /** `parley_rate_limit_refusals_total{plan}`: requests answered 429 by the rate limit. */
  rateLimitRefusals: Counter<'plan'>;
  /** `parley_delivery_attempts_total{outcome}`. */
  deliveryAttempts: Counter<'outcome'>;
  /** `parley_replies_total{outcome}`: agent replies, by outcome. */
  replies: Counter<'outcome'>;
  /** Feeds a delivery worker's `onAttempt` into the delivery metrics. */
  recordDeliveryAttempt(report: DeliveryAttemptReport): void;
}

/**
 * Builds a fresh registry (never prom-client's global one) with Parley's metrics. Counters with
 * a known set of labels start at 0 for each, so a dashboard sees `rate()` from the first scrape.
 */
export function createMetrics(options: MetricsOptions = {}): ParleyMetrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'parley_' });
  const registers = [registry];
  const httpRequests = new Counter({
    name: 'parley_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'Time from receiving a request to its response, by method and route template, in seconds.',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const rateLimitRefusals = new Counter({
    name: 'parley_rate_limit_refusals_total',
    help: 'Requests refused with 429 by the rate limit, by plan.',
    labelNames: ['plan'] as const,
    registers,
  });
  const deliveryAttempts = new Counter({
    name: 'parley_delivery_attempts_total',
    help: 'Webhook delivery attempts, by outcome: delivered, retry_scheduled, given_up, endpoint_disabled.',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of DELIVERY_OUTCOMES) deliveryAttempts.inc({ outcome }, 0);
  const deliveryDuration = new Histogram({
    name: 'parley_delivery_attempt_duration_seconds',
    help: 'Time one webhook delivery attempt took, in seconds.',
    buckets: DELIVERY_BUCKETS,
    registers,
  });
  const deliveryLag = new Histogram({
    name: 'parley_delivery_lag_seconds',
    help: 'Time from an event to the start of its first delivery attempt, in seconds: how far behind first attempts run.',
    buckets: DELIVERY_BUCKETS,
    registers,
  });
  const replies = new Counter({
    name: 'parley_replies_total',
    help: 'Agent replies, by outcome.',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of REPLY_OUTCOMES) replies.inc({ outcome }, 0);
  const queue = options.deliveryQueue;
  if (queue) {
    new Gauge({
      name: 'parley_delivery_queue_jobs',
      help: 'Delivery jobs by state: first and retry (ready per lane), scheduled (retries not yet due), leased (being attempted).',
      labelNames: ['state'] as const,
      registers,
      async collect() {
        const stats = await queue.stats();
        for (const state of ['first', 'retry', 'scheduled', 'leased'] as const) this.set({ state }, stats[state]);
      },
    });
  }
  const pool = options.databasePool;
  if (pool) {
    new Gauge({
      name: 'parley_database_pool_connections',
      help: 'PostgreSQL pool of this process: connections by state (total open, idle) and callers waiting for one.',
      labelNames: ['state'] as const,
      registers,
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }
  return {
    registry,
    httpRequests,
    httpDuration,
    rateLimitRefusals,
    deliveryAttempts,
    replies,
    recordDeliveryAttempt(report) {
      deliveryAttempts.inc({ outcome: report.outcome });
      deliveryDuration.observe(report.durationMs / 1000);
      if (report.lagMs !== undefined) deliveryLag.observe(report.lagMs / 1000);
    },
  };
}
