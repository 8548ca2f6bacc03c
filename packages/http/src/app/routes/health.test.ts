/** @module Tests of the liveness and readiness probes. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it, vi } from 'vitest';
import { harness, json } from '../../test-support/harness.js';
import { READINESS_TIMEOUT_MS } from './health.js';

describe('/healthz and /readyz', () => {
  it('/healthz is 200 without authentication', async () => {
    const h = await harness();
    const response = await h.call('GET', '/healthz', { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 when storage answers, without authentication', async () => {
    const h = await harness();
    const response = await h.call('GET', '/readyz', { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ status: 'ok' });
  });

  it('/readyz is 503 service_unavailable when the ping rejects, and /healthz stays 200', async () => {
    const adapters = memoryAdapters();
    adapters.storage.ping = async () => {
      throw new Error('ECONNREFUSED 10.0.0.5:6379');
    };
    const h = await harness({}, adapters);
    const response = await h.call('GET', '/readyz', { key: null });
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'service_unavailable', message: 'Storage is unreachable.' } });
    expect(text).not.toContain('ECONNREFUSED');
    expect((await h.call('GET', '/healthz', { key: null })).status).toBe(200);
  });

  it('/readyz is 503 when the ping hangs past the timeout', async () => {
    vi.useFakeTimers();
    try {
      const adapters = memoryAdapters();
      adapters.storage.ping = () => new Promise<void>(() => {});
      const h = await harness({}, adapters);
      const pending = h.call('GET', '/readyz', { key: null });
      await vi.advanceTimersByTimeAsync(READINESS_TIMEOUT_MS + 1);
      expect((await pending).status).toBe(503);
    } finally {
      vi.useRealTimers();
    }
  });
});
