/**
 * @module The metrics listener of a real server, scraped over HTTP: requests by route template
 * and status, latency histograms, rate-limit refusals, delivery attempts, queue depth and lag,
 * and the replies counter.
 */
import { REPLY_OUTCOMES } from '@parley/core';
import { eventually, startReceiver } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../cli/config.js';
import { startServer } from './start.js';
import { startFakeOpenAi } from '../test-support/fake-openai.js';
import { sample } from '../test-support/prometheus.js';

const keys = [
  { key: 'metrics-pro-key-0123456789', workspace: 'acme', plan: 'pro' },
  { key: 'metrics-tiny-key-0123456789', workspace: 'tiny', plan: 'enterprise', limitPerHour: 1 },
];

describe('METRICS_PORT', () => {
  it('serves Prometheus metrics on its own listener, scraped after real traffic', async () => {
    const receiver = await startReceiver();
    const server = await startServer(
      loadConfig({
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'silent',
        API_KEYS: JSON.stringify(keys),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      }),
      { print: () => {} },
    );
    try {
      expect(server.metrics).toBeDefined();
      expect(server.metrics!.port).not.toBe(server.handle.port);
      const api = (path: string, init: RequestInit = {}, key = keys[0]!.key) =>
        fetch(`${server.handle.url}${path}`, {
          ...init,
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
        });
      const scrape = async () => {
        const response = await fetch(server.metrics!.url);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
        return response.text();
      };

      await api('/api/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url: receiver.url, events: ['agent.created'] }),
      });
      const agent = (await (
        await api('/api/agents', {
          method: 'POST',
          body: JSON.stringify({ name: 'M', description: '', model: 'modelA-4' }),
        })
      ).json()) as { id: string };
      expect((await api(`/api/agents/${agent.id}`)).status).toBe(200);
      expect((await api('/api/agents/agt_missing')).status).toBe(404);
      expect((await api('/api/agents', {}, keys[1]!.key)).status).toBe(200);
      expect((await api('/api/agents', {}, keys[1]!.key)).status).toBe(429);
      await eventually(() => receiver.received.length === 1, 10_000, 'the webhook delivery');

      let page = '';
      await eventually(
        async () => sample((page = await scrape()), 'parley_delivery_attempts_total', { outcome: 'delivered' }) === 1,
        10_000,
        'the delivered attempt to be counted',
      );
      // By route template, never the raw path: one series for both agent ids.
      expect(
        sample(page, 'parley_http_requests_total', { method: 'GET', route: '/api/agents/:id', status: '200' }),
      ).toBe(1);
      expect(
        sample(page, 'parley_http_requests_total', { method: 'GET', route: '/api/agents/:id', status: '404' }),
      ).toBe(1);
      expect(sample(page, 'parley_http_requests_total', { method: 'POST', route: '/api/agents', status: '201' })).toBe(
        1,
      );
      expect(page).not.toContain('agt_missing');
      expect(page).not.toContain(agent.id);
      expect(
        sample(page, 'parley_http_request_duration_seconds_count', { method: 'GET', route: '/api/agents/:id' }),
      ).toBe(2);
      expect(
        sample(page, 'parley_http_request_duration_seconds_bucket', {
          method: 'GET',
          route: '/api/agents/:id',
          le: '+Inf',
        }),
      ).toBe(2);
      expect(sample(page, 'parley_rate_limit_refusals_total', { plan: 'enterprise' })).toBe(1);
      expect(sample(page, 'parley_delivery_attempts_total', { outcome: 'retry_scheduled' })).toBe(0);
      expect(sample(page, 'parley_delivery_attempt_duration_seconds_count')).toBe(1);
      expect(sample(page, 'parley_delivery_lag_seconds_count')).toBe(1);
      for (const state of ['first', 'retry', 'scheduled', 'leased'])
        expect(sample(page, 'parley_delivery_queue_jobs', { state })).toBe(0);
      for (const outcome of REPLY_OUTCOMES) expect(sample(page, 'parley_replies_total', { outcome })).toBe(0);
      expect(sample(page, 'parley_process_cpu_seconds_total')).toBeGreaterThan(0);

      // Metrics are not on the API port, and the metrics port serves nothing else.
      const onApi = await fetch(`${server.handle.url}/metrics`);
      expect(onApi.status).toBe(404);
      expect(await onApi.text()).not.toContain('parley_http_requests_total');
      expect((await fetch(server.metrics!.url.replace('/metrics', '/api/agents'))).status).toBe(404);
      expect((await fetch(server.metrics!.url, { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
      await receiver.close();
    }
    await expect(fetch(server.metrics!.url)).rejects.toThrow();
  });

  it('counts agent replies by outcome: one stored reply from a model on loopback', async () => {
    const model = await startFakeOpenAi();
    model.script([{ deltas: ['Hi', '!'] }]);
    const server = await startServer(
      loadConfig({
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'silent',
        API_KEYS: JSON.stringify([keys[0]]),
        MODELS: JSON.stringify({ chat: { provider: 'openai-compatible', baseURL: model.baseURL, model: 'fake' } }),
      }),
      { print: () => {} },
    );
    try {
      const api = async (path: string, body: unknown) =>
        (
          await fetch(`${server.handle.url}${path}`, {
            method: 'POST',
            body: JSON.stringify(body),
            headers: { Authorization: `Bearer ${keys[0]!.key}`, 'Content-Type': 'application/json' },
          })
        ).json() as Promise<{ id: string }>;
      const agent = await api('/api/agents', { name: 'R', description: '', model: 'chat' });
      const conversation = await api('/api/conversations', { agentId: agent.id });
      await api(`/api/conversations/${conversation.id}/messages`, { role: 'user', content: 'Hello?' });
      await eventually(
        async () =>
          sample(await (await fetch(server.metrics!.url)).text(), 'parley_replies_total', { outcome: 'stored' }) === 1,
        10_000,
        'the stored reply to be counted',
      );
    } finally {
      await server.close();
      await model.close();
    }
  });

  it('has no metrics listener without METRICS_PORT', async () => {
    const server = await startServer(loadConfig({ PORT: '0', LOG_LEVEL: 'silent' }), { print: () => {} });
    try {
      expect(server.metrics).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
