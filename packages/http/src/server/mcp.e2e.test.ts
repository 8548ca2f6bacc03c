/**
 * @module MCP servers as agent tools, end to end on memory (docs/mcp.md): MODELS → the real
 * openai-compatible provider → a fake Chat Completions server that asks for MCP tools; the tools
 * served by a real MCP server on loopback built with the MCP SDK's `McpServer` and Streamable HTTP
 * transport; approvals answered over HTTP.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, sdkMcpClients, type Core } from '@parley/core';
import { StaticHostResolver } from '@parley/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { createLogger } from '../app/logger.js';
import { languageModels } from './language-models.js';
import { readModelsConfig } from '../cli/models-config.js';
import { serve } from './serve.js';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startTestMcpServer, type TestMcpServer } from '../test-support/mcp-server.js';

let fake: FakeOpenAi;
let mcp: TestMcpServer;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  mcp = await startTestMcpServer();
});
afterAll(async () => {
  await fake.close();
  await mcp.close();
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  mcp.calls.length = 0;
  mcp.requests.length = 0;
});

type Json = Record<string, any>;

/** A server with a reply worker on memory; `privateTargets: false` refuses loopback MCP URLs. */
async function start(options: { privateTargets?: boolean; mcpTimeoutMs?: number } = {}) {
  const problems: string[] = [];
  const { models } = readModelsConfig(
    {
      MODELS: JSON.stringify({
        'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
      }),
    },
    problems,
  );
  expect(problems).toEqual([]);
  const allowPrivate = options.privateTargets ?? true;
  // Every line the server and its workers log (pino JSON, debug and up).
  const lines: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
  const mcpClients = sdkMcpClients({
    allowPrivate,
    ...(options.mcpTimeoutMs !== undefined && { timeoutMs: options.mcpTimeoutMs }),
  });
  const core: Core = createCore(memoryAdapters(), {
    hostResolver: new StaticHostResolver({ 'mcp.example.com': ['93.184.216.34'] }),
    allowPrivateWebhookUrls: allowPrivate,
    mcpClients,
    models: languageModels(models),
    replyRetryDelaysMs: [10, 10],
    logger,
    workers: { relay: { pollMs: 50 }, delivery: { pollMs: 50 }, replies: { pollMs: 50 } },
  });
  const { key } = await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro' }, 'test-key-mcp');
  const handle = await serve(createApp(core, { logger }), { port: 0, drainTimeoutMs: 300 });
  core.workers.start();
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${handle.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const running = {
    core,
    call,
    logs: () => lines.join('\n'),
    async conversation(mcpServers: Json[], extra: Json = {}) {
      const agent = await call('POST', '/api/agents', {
        name: 'Ada',
        description: 'helper',
        model: 'local-llm',
        mcpServers,
        ...extra,
      });
      expect(agent.status).toBe(201);
      const conversation = await call('POST', '/api/conversations', { agentId: agent.body.id });
      return { agent: agent.body, conversationId: conversation.body.id as string };
    },
    async messages(conversationId: string) {
      return (await call('GET', `/api/conversations/${conversationId}/messages?limit=100`)).body.messages as Json[];
    },
    async stop() {
      await core.workers.stop();
      await handle.close();
      await mcpClients.close();
    },
  };
  cleanups.push(() => running.stop());
  return running;
}

const toolMessages = (request: ChatRequest) =>
  request.body.messages.filter((message) => message.role === 'tool') as Json[];
const offeredTools = (request: ChatRequest) =>
  ((request.body.tools ?? []) as Json[]).map((tool) => tool.function.name as string).sort();

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The fake model: asks for `call` first, then answers with the text of the tool result it was given. */
function askFor(call: { name: string; arguments: object }) {
  fake.script((request) => {
    const last = request.body.messages.at(-1) as Json;
    if (last.role === 'tool') return { deltas: [`Result: ${String(last.content)}`] };
    return { toolCalls: [{ id: 'call_0', ...call }] };
  });
}

// Replies with tool calls over HTTP, on a machine that may be busy: generous per-test time.
describe('MCP servers as agent tools', { timeout: 60_000 }, () => {
  it('offers the server tools as <label>__<tool> with their JSON Schema, calls one and hands its text back to the model', async () => {
    askFor({ name: 'weather__get_weather', arguments: { city: 'Paris' } });
    const server = await start();
    const { conversationId } = await server.conversation([
      { label: 'weather', url: mcp.url, requireApproval: 'never' },
    ]);
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Paris?' });
    const messages = await until(
      () => server.messages(conversationId),
      (found) => found.length === 4,
    );
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Paris?'],
      ['assistant', ''],
      ['tool', 'Sunny in Paris'],
      ['assistant', 'Result: Sunny in Paris'],
    ]);
    const [, step, result] = messages as [Json, Json, Json];
    expect(step.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_weather', server: 'weather', arguments: { city: 'Paris' } },
    ]);
    expect(result.toolCallId).toBe(step.toolCalls[0].id);
    expect(result.metadata).toEqual({ tool: { name: 'get_weather', server: 'weather' } });
    expect(mcp.calls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' } }]);

    // The model was offered every tool of the server, named <label>__<tool>, with the server's schema.
    const first = fake.requests[0]!;
    expect(offeredTools(first)).toEqual([
      'weather__fail',
      'weather__forecast',
      'weather__get_weather',
      'weather__huge',
      'weather__slow',
    ]);
    const weather = (first.body.tools as Json[]).find((tool) => tool.function.name === 'weather__get_weather')!;
    expect(weather.function.description).toBe('The weather in a city');
    expect(weather.function.parameters).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    });
    // The second step saw the call under the model's name, and its result.
    const second = fake.requests[1]!;
    const assistant = second.body.messages.find((message) => message.role === 'assistant') as Json;
    expect(assistant.tool_calls[0].function.name).toBe('weather__get_weather');
    expect(toolMessages(second)[0]!.content).toBe('Sunny in Paris');
  });

  it('offers only allowedTools; stores structuredContent as the result; an isError result reaches the model as {"error"}', async () => {
    fake.script((request) => {
      const results = toolMessages(request);
      if (results.length > 0) return { deltas: ['ok'] };
      return {
        toolCalls: [
          { id: 'call_0', name: 'w__forecast', arguments: { city: 'Oslo', days: 3 } },
          { id: 'call_1', name: 'w__fail', arguments: {} },
        ],
      };
    });
    const server = await start();
    const { conversationId } = await server.conversation([
      { label: 'w', url: mcp.url, allowedTools: ['forecast', 'fail'], requireApproval: 'never' },
    ]);
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Oslo?' });
    const messages = await until(
      () => server.messages(conversationId),
      (found) => found.at(-1)?.content === 'ok',
    );
    expect(offeredTools(fake.requests[0]!)).toEqual(['w__fail', 'w__forecast']);
    const results = new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.metadata.tool.name, m.content]));
    expect(JSON.parse(results.get('forecast'))).toEqual({ city: 'Oslo', days: 3, summary: '3 days of sun' });
    expect(JSON.parse(results.get('fail'))).toEqual({ error: 'The database is down.' });
    // The model got both results, the error as {"error": …}.
    const given = toolMessages(fake.requests[1]!).map((m) => m.content);
    expect(given).toContain(JSON.stringify({ error: 'The database is down.' }));
  });

  it('pauses a call needing approval (kind "mcp", server), calls it once approved and resumes; a rejected one is not called', async () => {
    askFor({ name: 'weather__get_weather', arguments: { city: 'Rome' } });
    const server = await start();
    const { conversationId } = await server.conversation([
      { label: 'weather', url: mcp.url, requireApproval: { never: ['forecast'] } },
    ]);
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Rome?' });
    const paused = await until(
      () => server.call('GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 1,
    ).catch(async (error) => {
      throw new Error(`${error}\n${server.logs()}`);
    });
    const id = paused.body.pendingToolCalls[0].id as string;
    expect(paused.body.pendingToolCalls).toEqual([
      { id, name: 'get_weather', server: 'weather', arguments: { city: 'Rome' }, kind: 'mcp', requiresApproval: true },
    ]);
    const events = (await server.call('GET', '/api/events?type=reply.requires_action')).body.events as Json[];
    expect(events.map((event) => event.data.toolCalls)).toEqual([paused.body.pendingToolCalls]);
    expect(mcp.calls).toEqual([]);
    // An approval is answered {approved}; an output is refused for it.
    const wrong = await server.call('POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: id, output: 'Sunny' }],
    });
    expect(wrong.status).toBe(400);
    const approved = await server.call('POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: id, approved: true }],
    });
    expect(approved.status).toBe(202);
    const messages = await until(
      () => server.messages(conversationId),
      (found) => found.at(-1)?.role === 'assistant' && found.at(-1)?.content !== '',
    );
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'Rome?'],
      ['assistant', ''],
      ['tool', 'Sunny in Rome'],
      ['assistant', 'Result: Sunny in Rome'],
    ]);
    expect(mcp.calls).toEqual([{ name: 'get_weather', arguments: { city: 'Rome' } }]);

    // Rejected: the model is told, the server never called.
    mcp.calls.length = 0;
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Again?' });
    const again = await until(
      () => server.call('GET', `/api/conversations/${conversationId}`),
      (response) => response.body.pendingToolCalls.length === 1,
    );
    await server.call('POST', `/api/conversations/${conversationId}/tool-results`, {
      results: [{ toolCallId: again.body.pendingToolCalls[0].id, approved: false, reason: 'not now' }],
    });
    const after = await until(
      () => server.messages(conversationId),
      (found) => found.length === 8,
    );
    expect(after[6]!.content).toBe(JSON.stringify({ error: 'rejected', reason: 'not now' }));
    expect(mcp.calls).toEqual([]);
  });

  it('re-initialises an expired session (HTTP 404) and makes the call once', async () => {
    askFor({ name: 'weather__get_weather', arguments: { city: 'Lima' } });
    const server = await start();
    const { conversationId } = await server.conversation([
      { label: 'weather', url: mcp.url, requireApproval: 'never' },
    ]);
    const sessionsBefore = mcp.sessions();
    // A first reply opens a session and caches the tool list.
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Lima?' });
    await until(
      () => server.messages(conversationId),
      (found) => found.length === 4,
    );
    expect(mcp.sessions()).toBe(sessionsBefore + 1);
    mcp.expireSessions();
    mcp.calls.length = 0;
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'And now?' });
    const messages = await until(
      () => server.messages(conversationId),
      (found) => found.length === 8,
    );
    expect(messages[6]!.content).toBe('Sunny in Lima');
    expect(mcp.calls).toEqual([{ name: 'get_weather', arguments: { city: 'Lima' } }]);
    expect(mcp.sessions()).toBe(sessionsBefore + 2);
    // The call in the expired session was answered 404 once, then made in a new one.
    expect(mcp.expiredRequests()).toBe(1);
  });

  it('refuses a private MCP URL at create (400) unless private URLs are allowed, and at connect', async () => {
    const server = await start({ privateTargets: false });
    for (const url of ['http://127.0.0.1:9/mcp', 'http://169.254.169.254/latest', 'http://10.0.0.8/mcp']) {
      const refused = await server.call('POST', '/api/agents', {
        name: 'Ada',
        description: '',
        model: 'local-llm',
        mcpServers: [{ label: 'x', url }],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.details.issues.map((issue: Json) => issue.path)).toEqual(['mcpServers.0.url']);
    }
    // Registered while it resolved to a public address, refused where it connects (127.0.0.1).
    const clients = sdkMcpClients({
      resolver: new StaticHostResolver({ 'mcp.example.com': ['127.0.0.1'] }),
    });
    cleanups.push(() => clients.close());
    const port = new URL(mcp.url).port;
    await expect(
      clients.listTools({ workspaceId: 'ws1' }, { label: 'x', url: `http://mcp.example.com:${port}/mcp`, headers: {} }),
    ).rejects.toThrow(/non-public \(loopback\) address/);
    await expect(clients.listTools({ workspaceId: 'ws1' }, { label: 'x', url: mcp.url, headers: {} })).rejects.toThrow(
      /non-public \(loopback\) address/,
    );
    expect(mcp.requests).toEqual([]);
  });

  it('sends header values to the server but never shows them: responses list header names; events and logs never hold a value', async () => {
    const secret = 'Bearer mcp-secret-value-1234567890';
    askFor({ name: 'docs__get_weather', arguments: { city: 'Kyiv' } });
    const server = await start();
    const { agent, conversationId } = await server.conversation([
      {
        label: 'docs',
        url: mcp.url,
        headers: { Authorization: secret, 'X-Team': 'team-secret-42' },
        requireApproval: 'never',
      },
    ]);
    expect(agent.mcpServers).toEqual([
      { label: 'docs', url: mcp.url, headerNames: ['Authorization', 'X-Team'], requireApproval: 'never' },
    ]);
    const read = await server.call('GET', `/api/agents/${agent.id}`);
    expect(read.body.mcpServers).toEqual(agent.mcpServers);
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Kyiv?' });
    await until(
      () => server.messages(conversationId),
      (found) => found.length === 4,
    );
    const sent = mcp.requests.filter((request) => request.method === 'POST');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((request) => request.headers.authorization === secret)).toBe(true);
    expect(sent.every((request) => request.headers['x-team'] === 'team-secret-42')).toBe(true);
    // A PATCH replaces the list: the old values are gone with it.
    const patched = await server.call('PATCH', `/api/agents/${agent.id}`, {
      mcpServers: [{ label: 'docs', url: mcp.url, headers: { Authorization: 'Bearer other-secret-987' } }],
    });
    expect(patched.body.mcpServers).toEqual([
      { label: 'docs', url: mcp.url, headerNames: ['Authorization'], requireApproval: 'always' },
    ]);
    const everything = JSON.stringify([
      (await server.call('GET', '/api/events?limit=100')).body,
      (await server.call('GET', '/api/agents')).body,
      patched.body,
      server.logs(),
    ]);
    for (const value of [secret, 'mcp-secret-value', 'team-secret-42', 'other-secret-987'])
      expect(everything).not.toContain(value);
    expect(server.logs()).toContain('reply stored');
  });

  it('a down, slow or oversized server: the reply goes on with an error result or fails with a clear reply.failed; nothing hangs', async () => {
    fake.script((request) => {
      if ((request.body.messages.at(-1) as Json).role === 'tool') return { deltas: ['noted'] };
      const asked = String(request.body.messages.at(-1)?.content);
      if (asked === 'slow') return { toolCalls: [{ id: 'call_0', name: 'w__slow', arguments: { ms: 20_000 } }] };
      return { toolCalls: [{ id: 'call_0', name: 'w__huge', arguments: {} }] };
    });
    const server = await start();
    const { conversationId } = await server.conversation([{ label: 'w', url: mcp.url, requireApproval: 'never' }]);
    // A 10 MB result: an error the model can read, not a 10 MB message.
    await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'huge' });
    let messages = await until(
      () => server.messages(conversationId),
      (found) => found.at(-1)?.content === 'noted',
    );
    expect(JSON.parse(messages[2]!.content)).toEqual({ error: expect.stringMatching(/larger than 2048 KiB/) });
    // Slower than the deadline (3 s here, 30 s by default): an error result.
    const impatient = await start({ mcpTimeoutMs: 3_000 });
    const waiting = await impatient.conversation([{ label: 'w', url: mcp.url, requireApproval: 'never' }]);
    const slowId = waiting.conversationId;
    await impatient.call('POST', `/api/conversations/${slowId}/messages`, { role: 'user', content: 'slow' });
    messages = await until(
      () => impatient.messages(slowId),
      (found) => found.at(-1)?.content === 'noted',
    );
    expect(JSON.parse(messages[2]!.content)).toEqual({ error: expect.stringMatching(/did not answer within 3 s/) });

    // A server that is not there: the tool list cannot be read, the reply fails saying which and why.
    const down = await start();
    const gone = await startTestMcpServer();
    await gone.close();
    const other = await down.conversation([{ label: 'gone', url: gone.url }]);
    await down.call('POST', `/api/conversations/${other.conversationId}/messages`, { role: 'user', content: 'hi' });
    const failed = await until(
      async () => (await down.call('GET', '/api/events?type=reply.failed')).body.events as Json[],
      (events) => events.length === 1,
    );
    expect(failed[0]!.data.error).toMatch(/^The MCP server 'gone' could not list its tools: .*Connection refused/);
    expect(await down.messages(other.conversationId)).toHaveLength(1);
  });

  it('a server that answers garbage or an HTTP error: the reply fails with reply.failed saying which server and why', async () => {
    const { createServer } = await import('node:http');
    const garbage = createServer((request, response) => {
      if (request.url === '/html') response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>hello</h1>');
      else if (request.url === '/json') response.writeHead(200, { 'content-type': 'application/json' }).end('{"not":');
      else response.writeHead(500).end('boom');
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => garbage.close(() => resolve())));
    const base = `http://127.0.0.1:${(garbage.address() as { port: number }).port}`;
    const server = await start();
    const expected: Array<[string, RegExp]> = [
      [
        '/html',
        /^The MCP server 'g' could not list its tools: The MCP server answered with a content type that is not MCP\./,
      ],
      ['/json', /^The MCP server 'g' could not list its tools: The MCP server sent an answer that is not valid MCP\./],
      ['/500', /^The MCP server 'g' could not list its tools: The MCP server answered HTTP 500\./],
    ];
    for (const [path, error] of expected) {
      const { conversationId } = await server.conversation([{ label: 'g', url: `${base}${path}` }]);
      await server.call('POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'hi' });
      const failed = await until(
        async () => (await server.call('GET', '/api/events?type=reply.failed&limit=100')).body.events as Json[],
        (events) => events.some((event) => event.data.conversationId === conversationId),
      );
      expect(failed.find((event) => event.data.conversationId === conversationId)!.data.error).toMatch(error);
    }
  });
});
