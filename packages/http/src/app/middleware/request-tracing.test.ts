/**
 * @module The HTTP server span of each request, exported to the SDK's in-memory exporter: named by
 * the route template, the child of an incoming `traceparent`, its context recorded with the events
 * the request writes; no header value.
 */
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, harness, json } from '../../test-support/harness.js';

// What a host's SDK registers: a context manager and the W3C propagator (never the provider here).
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  context.disable();
  propagation.disable();
});
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
afterEach(() => exporter.reset());

const server = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER);

describe('request spans', () => {
  it('names each request by its route template, never its ids, and records no header value', async () => {
    const t = await harness({ tracer });
    const agent = await json(await t.call('POST', '/api/agents', { json: agentInput }));
    expect((await t.call('GET', `/api/agents/${agent.id}`, { headers: { 'x-secret-header': 'hush' } })).status).toBe(
      200,
    );
    expect((await t.call('GET', '/api/agents/agt_unknown')).status).toBe(404);
    expect((await t.call('GET', '/api/agents', { key: null })).status).toBe(401);
    expect(server().map((span) => [span.name, span.attributes['http.response.status_code']])).toEqual([
      ['POST /api/agents', 201],
      ['GET /api/agents/:id', 200],
      ['GET /api/agents/:id', 404],
      ['GET /api/*', 401],
    ]);
    expect(server()[1]!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.scheme': 'http',
      'http.route': '/api/agents/:id',
      'http.response.status_code': 200,
    });
    const exported = JSON.stringify(exporter.getFinishedSpans().map((span) => [span.name, span.attributes]));
    for (const text of [agent.id, 'agt_unknown', 'hush', t.key]) expect(exported).not.toContain(text);
    expect(server().every((span) => span.status.code !== SpanStatusCode.ERROR)).toBe(true);
  });

  it("continues the caller's trace, and the events the request records carry its span", async () => {
    const t = await harness({ tracer });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const agent = await json(
      await t.call('POST', '/api/agents', {
        json: agentInput,
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      }),
    );
    const [span] = server();
    expect(span!.spanContext().traceId).toBe(traceId);
    expect(span!.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    const batch = await t.adapters.storage.outbox.take(10, 1_000);
    const created = batch!.events.find(
      (event) => event.type === 'agent.created' && (event.data as { id: string }).id === agent.id,
    );
    expect(batch!.traceContexts?.[created!.id]).toBe(`00-${traceId}-${span!.spanContext().spanId}-01`);
  });

  it("mounted in a host whose request span is active, is that span's child", async () => {
    const t = await harness({ tracer });
    const host = new Hono();
    host.use((c, next) =>
      tracer.startActiveSpan('host request', async (span) => {
        try {
          return await next();
        } finally {
          span.end();
        }
      }),
    );
    host.route('/', t.app);
    const response = await host.request('/api/agents', {
      headers: {
        Authorization: `Bearer ${t.key}`,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    });
    expect(response.status).toBe(200);
    const hostSpan = exporter.getFinishedSpans().find((span) => span.name === 'host request')!;
    expect(server()[0]!.parentSpanContext?.spanId).toBe(hostSpan.spanContext().spanId);
  });

  it('without an SDK (the no-op tracer) makes no span and records no trace context', async () => {
    const t = await harness();
    await t.call('POST', '/api/agents', { json: agentInput });
    expect(exporter.getFinishedSpans()).toEqual([]);
    const batch = await t.adapters.storage.outbox.take(10, 1_000);
    expect(batch!.events).toHaveLength(1);
    expect(batch!.traceContexts).toBeUndefined();
  });
});
