/** @module Tests of the metrics registry: one per server, no collisions, counters ready at 0. */
import { describe, expect, it } from 'vitest';
import { register } from 'prom-client';
import { createMetrics } from './metrics.js';

describe('createMetrics', () => {
  it('gives each server its own registry: two in one process neither collide nor share counts, and the global one stays empty', async () => {
    const a = createMetrics();
    const b = createMetrics({ processMetrics: false });
    a.recordDeliveryAttempt({ outcome: 'given_up', trigger: 'scheduled', durationMs: 1500 });
    expect(await a.registry.getSingleMetricAsString('parley_delivery_attempts_total')).toContain(
      'parley_delivery_attempts_total{outcome="given_up"} 1',
    );
    expect(await b.registry.getSingleMetricAsString('parley_delivery_attempts_total')).toContain(
      'parley_delivery_attempts_total{outcome="given_up"} 0',
    );
    expect(await b.registry.metrics()).not.toContain('parley_process_cpu');
    expect(await register.metrics()).not.toContain('parley_');
  });

  it('observes attempt durations in seconds and lag only when reported', async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordDeliveryAttempt({ outcome: 'delivered', trigger: 'scheduled', durationMs: 30, lagMs: 2000 });
    metrics.recordDeliveryAttempt({ outcome: 'delivered', trigger: 'manual', durationMs: 30 });
    const page = await metrics.registry.metrics();
    expect(page).toContain('parley_delivery_attempt_duration_seconds_sum 0.06');
    expect(page).toContain('parley_delivery_lag_seconds_sum 2');
    expect(page).toContain('parley_delivery_lag_seconds_count 1');
  });
});
