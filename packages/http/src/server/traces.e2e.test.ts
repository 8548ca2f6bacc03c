/**
 * @module One trace across processes (docs/observability.md#traces): `parley serve` (no workers)
 * and a separate `parley worker`, sharing Redis or PostgreSQL, export OTLP/HTTP to a receiver on
 * loopback — protobuf on Redis, JSON on PostgreSQL. A message to an agent whose model (a fake Chat
 * Completions server) asks for a webhook tool, with a webhook subscriber: the `POST` of the
 * message, the reply's `invoke_agent`, both `chat` calls, the `execute_tool` and the webhook
 * attempts are one trace, the reply's spans from the worker; no attribute holds the message's
 * text unless content capture is on.
 */
import { startReceiver, type Receiver } from '@parley/core/testing';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../test-support/otlp-receiver.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';
import { sharedBackends } from '../test-support/shared-backends.js';
import { traceTree, traceWaterfall } from '../test-support/trace-waterfall.js';

const KEY = 'traces-e2e-key-0000000001';
const SECRET_TEXT = 'Is it raining in Oslo? My passport number is P1234567.';
const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = new URL('../../../../', import.meta.url);
/** `UPDATE_SCREENSHOTS=1` writes the picture docs/observability.md shows; otherwise it goes to `.artifacts/`. */
const PICTURE = fileURLToPath(
  new URL(process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/images/trace.png' : '.artifacts/trace.png', ROOT),
);

/** Draws `html` in Chromium (when there is one) into {@link PICTURE}. */
async function picture(html: string): Promise<void> {
  if (!existsSync(CHROMIUM)) return;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 400 } });
    await page.setContent(html);
    mkdirSync(dirname(PICTURE), { recursive: true });
    await page.screenshot({ path: PICTURE, fullPage: true });
    console.log(`The trace's picture: ${PICTURE}`);
  } finally {
    await browser.close();
  }
}

for (const backend of await sharedBackends())
  backend.describe(`one trace from a message to its reply, tool call and webhooks (${backend.name})`, () => {
    let fake: FakeOpenAi;
    let tool: Receiver;
    let subscriber: Receiver;
    let otlp: OtlpReceiver;
    const processes: ServerProcess[] = [];
    const protocol = backend.name === 'Redis' ? 'http/protobuf' : 'http/json';

    beforeAll(async () => {
      [fake, tool, subscriber, otlp] = await Promise.all([
        startFakeOpenAi(),
        startReceiver(),
        startReceiver(),
        startOtlpReceiver(),
      ]);
      tool.answer = () => ({ status: 200, body: JSON.stringify({ forecast: 'drizzle-and-fog' }) });
      fake.script((request) =>
        request.body.messages.at(-1)?.role === 'tool'
          ? { deltas: ['Light ', 'drizzle.'], usage: { prompt_tokens: 40, completion_tokens: 2 } }
          : {
              toolCalls: [{ id: 'call_1', name: 'get_forecast', arguments: { city: 'Oslo' } }],
              usage: { prompt_tokens: 21, completion_tokens: 7 },
            },
      );
    });
    afterAll(async () => {
      await Promise.all(processes.map((process) => process.stop('SIGKILL')));
      await Promise.all([fake.close(), tool.close(), subscriber.close(), otlp.close()]);
      await backend.cleanup();
    });

    /**
     * `parley serve` without workers and a `parley worker` with the model, both exporting traces.
     * Loading the OpenTelemetry Node SDK adds seconds to a start (tens on a loaded machine), hence
     * the long start-up bound.
     */
    async function start(label: string, extra: Record<string, string> = {}) {
      const env = {
        ...(await backend.fresh(label)),
        API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]),
        MODELS: JSON.stringify({
          'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake-key' },
        }),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...extra,
      };
      const serve = await startServerProcess(
        { ...env, DELIVERY_WORKER: 'false', OTEL_RESOURCE_ATTRIBUTES: 'parley.test.process=serve' },
        'serve',
        [],
        { startTimeoutMs: 150_000 },
      );
      processes.push(serve);
      const worker = await startServerProcess(
        { ...env, OTEL_RESOURCE_ATTRIBUTES: 'parley.test.process=worker' },
        'worker',
        [],
        { startTimeoutMs: 150_000 },
      );
      processes.push(worker);
      return { serve, worker };
    }

    const call = async (base: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return (await response.json()) as any;
    };

    /** Sends the message and waits for the reply and both webhooks; stops both processes (flushing their spans). */
    async function converse(serve: ServerProcess, worker: ServerProcess) {
      const before = { tool: tool.received.length, subscriber: subscriber.received.length };
      await call(serve.base, 'POST', '/api/webhooks', { url: subscriber.url, events: ['message.received'] });
      const agent = await call(serve.base, 'POST', '/api/agents', {
        name: 'Forecaster',
        description: '',
        model: 'local-llm',
        tools: [
          {
            name: 'get_forecast',
            description: 'The forecast for a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            kind: 'webhook',
            url: tool.url,
          },
        ],
      });
      const conversation = await call(serve.base, 'POST', '/api/conversations', { agentId: agent.id });
      const sent = await call(serve.base, 'POST', `/api/conversations/${conversation.id}/messages`, {
        role: 'user',
        content: SECRET_TEXT,
      });
      expect(sent.id).toMatch(/^msg_/);
      // The tool step and the answer, each a message.received.
      await subscriber.waitFor(before.subscriber + 2, 60_000);
      // Once, unless a reply was tried again (a worker's storage call timing out on a loaded machine).
      expect(tool.received.length).toBeGreaterThan(before.tool);
      expect(await worker.stop('SIGTERM')).toBe(0);
      expect(await serve.stop('SIGTERM')).toBe(0);
      return { agent, conversation, toolRequest: tool.received.at(-1)! };
    }

    const byId = () => new Map(otlp.spans.map((span) => [span.spanId, span]));
    const processOf = (span: ReceivedSpan) => span.resource['parley.test.process'];

    it(`exports one trace across serve and worker (OTLP ${protocol}), without content`, async () => {
      const { serve, worker } = await start('traces');
      const { agent, conversation, toolRequest } = await converse(serve, worker);

      // Both processes flushed their spans when they stopped.
      const found = otlp.spans.find((span) => span.name === 'POST /api/conversations/:id/messages');
      expect(found, otlp.spans.map((span) => span.name).join(', ')).toBeDefined();
      const post = found!;
      expect(otlp.contentTypes[0]).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      expect(post).toMatchObject({
        kind: SPAN_KIND.server,
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/api/conversations/:id/messages',
          'http.response.status_code': 201,
        },
        resource: { 'service.name': 'parley', 'parley.test.process': 'serve' },
      });
      // Never the raw path with its ids.
      expect(JSON.stringify(otlp.spans.filter((span) => span.kind === SPAN_KIND.server))).not.toContain(
        conversation.id,
      );

      const trace = otlp.spans.filter((span) => span.traceId === post.traceId);
      const named = (name: string) => trace.filter((span) => span.name === name);
      const spans = byId();
      const ancestors = (span: ReceivedSpan): string[] => {
        const names: string[] = [];
        for (let up = spans.get(span.parentSpanId); up; up = spans.get(up.parentSpanId)) names.push(up.name);
        return names;
      };

      // The trace as a tree for whoever reads the output, and as a picture (docs/observability.md).
      const tree = traceTree(trace).map(({ span, depth }) => `${'  '.repeat(depth)}${span.name} [${processOf(span)}]`);
      console.log(`One trace (OTLP ${protocol}):\n${tree.join('\n')}`);
      await picture(traceWaterfall(trace, (span) => String(processOf(span))));

      // The reply that was stored: on a loaded machine an earlier try may have failed (a storage
      // timeout) and been made again, each try its own invoke_agent span in the same trace.
      const invoke = named('invoke_agent Forecaster').find(
        (span) => span.attributes['parley.reply.outcome'] === 'stored',
      );
      expect(invoke).toMatchObject({
        parentSpanId: post.spanId,
        kind: SPAN_KIND.internal,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': 'parley',
          'gen_ai.agent.id': agent.id,
          'gen_ai.agent.name': 'Forecaster',
          'gen_ai.conversation.id': conversation.id,
          'gen_ai.request.model': 'tiny-1',
          'parley.reply.outcome': 'stored',
        },
      });
      expect(processOf(invoke!)).toBe('worker');

      const chats = named('chat tiny-1').filter((span) => span.parentSpanId === invoke?.spanId);
      expect(chats).toHaveLength(2);
      for (const chat of chats)
        expect(chat).toMatchObject({
          parentSpanId: invoke!.spanId,
          kind: SPAN_KIND.client,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': 'parley',
            'gen_ai.request.model': 'tiny-1',
            'gen_ai.response.model': 'tiny-1',
            'gen_ai.conversation.id': conversation.id,
            'gen_ai.agent.id': agent.id,
            'gen_ai.agent.name': 'Forecaster',
          },
        });
      expect(chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons'])).toEqual(
        expect.arrayContaining([['tool_calls'], ['stop']]),
      );
      expect(chats.map((chat) => chat.attributes['gen_ai.usage.input_tokens']).sort()).toEqual([21, 40]);

      const execute = named('execute_tool get_forecast').find((span) => span.parentSpanId === invoke?.spanId);
      expect(execute).toMatchObject({
        parentSpanId: invoke!.spanId,
        attributes: { 'gen_ai.tool.name': 'get_forecast', 'gen_ai.operation.name': 'execute_tool' },
      });
      expect(execute!.attributes['gen_ai.tool.call.id']).toMatch(/^call_/);
      // The tool's request carried the trace on to its receiver.
      expect(toolRequest.headers.traceparent).toContain(post.traceId);
      expect(execute!.status).toBe(0);

      const attempts = named('webhook message.received').filter((span) => span.parentSpanId === invoke?.spanId);
      expect(attempts).toHaveLength(2);
      for (const attempt of attempts) {
        expect(attempt).toMatchObject({
          parentSpanId: invoke!.spanId,
          attributes: {
            'parley.event.type': 'message.received',
            'parley.webhook.attempt': 1,
            'http.response.status_code': 200,
            'parley.webhook.outcome': 'delivered',
          },
        });
        expect(attempt.attributes['parley.webhook.endpoint.id']).toMatch(/^wh_/);
        expect(processOf(attempt)).toBe('worker');
      }

      // Outgoing HTTP (undici) nests under the model call and the tool call.
      const outgoing = trace.filter((span) => span.kind === SPAN_KIND.client && span.scope.includes('undici'));
      expect(outgoing.some((span) => ancestors(span)[0] === 'chat tiny-1')).toBe(true);
      expect(outgoing.some((span) => ancestors(span)[0] === 'execute_tool get_forecast')).toBe(true);
      // The backend's driver is traced too, inside the request.
      const database = trace.filter((span) => /ioredis|pg/.test(span.scope));
      expect(database.length).toBeGreaterThan(0);

      // Nothing the user, the model or the tool said; no key.
      const exported = JSON.stringify(otlp.spans);
      for (const text of [SECRET_TEXT, 'P1234567', 'drizzle', 'Oslo', KEY, 'sk-fake-key'])
        expect(exported).not.toContain(text);
    }, 400_000);

    it('records the message, the tool arguments and the result when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true', async () => {
      const { serve, worker } = await start('traces_content', {
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      });
      const { conversation } = await converse(serve, worker);
      const chats = otlp.spans.filter(
        (span) => span.name === 'chat tiny-1' && span.attributes['gen_ai.conversation.id'] === conversation.id,
      );
      expect(chats.length).toBeGreaterThanOrEqual(2);
      expect(chats.map((chat) => String(chat.attributes['gen_ai.input.messages'])).join('\n')).toContain('P1234567');
      const execute = otlp.spans.find(
        (span) =>
          span.name === 'execute_tool get_forecast' && span.attributes['gen_ai.conversation.id'] === conversation.id,
      );
      expect(execute?.attributes['gen_ai.tool.call.arguments']).toBe(JSON.stringify({ city: 'Oslo' }));
      expect(execute?.attributes['gen_ai.tool.call.result']).toContain('drizzle-and-fog');
      // Never a key, even then.
      expect(JSON.stringify(otlp.spans)).not.toContain('sk-fake-key');
    }, 400_000);
  });
