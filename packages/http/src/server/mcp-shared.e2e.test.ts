/**
 * @module MCP tools on the durable backends (docs/mcp.md): `parley serve` processes sharing Redis or
 * PostgreSQL, MODELS pointing at a fake Chat Completions server, the tools on a real MCP server on
 * loopback (the MCP SDK's `McpServer`). A call that waits for approval survives the death of the
 * process that paused it and is made once, after an approval given through another process.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi } from '../test-support/fake-openai.js';
import { startTestMcpServer, type TestMcpServer } from '../test-support/mcp-server.js';
import { sharedBackends } from '../test-support/shared-backends.js';
import { repliesCounted, startServerProcess, type ServerProcess } from '../test-support/server-process.js';

const KEY = 'mcp-shared-key-000000001';
const SECRET = 'Bearer mcp-shared-secret-5f2c9a';

type Json = Record<string, any>;

for (const backend of await sharedBackends()) {
  backend.describe(`MCP tools on ${backend.name}`, () => {
    let fake: FakeOpenAi;
    let mcp: TestMcpServer;
    const started: ServerProcess[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAi();
      mcp = await startTestMcpServer();
    });
    afterAll(async () => {
      await Promise.all(started.map((instance) => instance.stop('SIGKILL')));
      await fake.close();
      await mcp.close();
      await backend.cleanup();
    });

    const start = async (store: Record<string, string>) => {
      const instance = await startServerProcess(
        {
          ...store,
          API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'pro' }]),
          MODELS: JSON.stringify({
            'local-llm': { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKey: 'sk-fake' },
          }),
          // The MCP server listens on loopback.
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          LOG_LEVEL: 'debug',
          METRICS_PORT: '0',
        },
        'serve',
        [],
        // A first start migrates its schema: longer on a busy machine.
        { startTimeoutMs: 60_000 },
      );
      started.push(instance);
      return instance;
    };
    const call = async (instance: ServerProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${instance.base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 40_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await read();
        if (done(value)) return value;
        if (Date.now() > deadline) throw new Error(`Timed out; last value: ${JSON.stringify(value)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    // Two server processes start: seconds each on a busy machine.
    const title =
      'a paused MCP call approved through another process after the first one died is made once and the reply resumes; header values are never shown or logged';
    it(title, { timeout: 180_000 }, async () => {
      fake.script((request: ChatRequest) => {
        const last = request.body.messages.at(-1) as Json;
        if (last.role === 'tool') return { deltas: [`It is ${String(last.content)}.`] };
        return { toolCalls: [{ id: 'call_0', name: 'weather__forecast', arguments: { city: 'Oslo', days: 2 } }] };
      });
      const store = await backend.fresh('mcp');
      const [first, second] = await Promise.all([start(store), start(store)]);
      const agent = await call(first, 'POST', '/api/agents', {
        name: 'Ada',
        description: '',
        model: 'local-llm',
        mcpServers: [{ label: 'weather', url: mcp.url, headers: { Authorization: SECRET } }],
      });
      expect(agent.status).toBe(201);
      expect(agent.body.mcpServers).toEqual([
        { label: 'weather', url: mcp.url, headerNames: ['Authorization'], requireApproval: 'always' },
      ]);
      const conversationId = (await call(first, 'POST', '/api/conversations', { agentId: agent.body.id })).body
        .id as string;
      await call(first, 'POST', `/api/conversations/${conversationId}/messages`, { role: 'user', content: 'Oslo?' });
      const paused = await until(
        () => call(second, 'GET', `/api/conversations/${conversationId}`),
        (response) => response.body.pendingToolCalls?.length === 1,
      );
      const id = paused.body.pendingToolCalls[0].id as string;
      expect(paused.body.pendingToolCalls).toEqual([
        {
          id,
          name: 'forecast',
          server: 'weather',
          arguments: { city: 'Oslo', days: 2 },
          kind: 'mcp',
          requiresApproval: true,
        },
      ]);
      expect(mcp.calls).toEqual([]);

      // The process that paused the reply dies (once it has acknowledged the request:
      // repliesCounted); the approval goes through the other one.
      const pausedReplies = async () =>
        (await repliesCounted(first, 'paused')) + (await repliesCounted(second, 'paused'));
      await until(pausedReplies, (count) => count === 1);
      await first.stop('SIGKILL');
      const approved = await call(second, 'POST', `/api/conversations/${conversationId}/tool-results`, {
        results: [{ toolCallId: id, approved: true }],
      });
      expect(approved).toEqual({ status: 202, body: { conversationId, pendingToolCalls: [] } });
      const messages = await until(
        async () =>
          (await call(second, 'GET', `/api/conversations/${conversationId}/messages?limit=100`)).body
            .messages as Json[],
        (found) => found.length === 4,
      );
      const result = JSON.stringify({ city: 'Oslo', days: 2, summary: '2 days of sun' });
      expect(messages.map((message) => [message.role, message.content])).toEqual([
        ['user', 'Oslo?'],
        ['assistant', ''],
        ['tool', result],
        ['assistant', `It is ${result}.`],
      ]);
      expect(messages[1]!.toolCalls).toEqual([
        { id, name: 'forecast', server: 'weather', arguments: { city: 'Oslo', days: 2 } },
      ]);
      // Made once, with the header.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(mcp.calls).toEqual([{ name: 'forecast', arguments: { city: 'Oslo', days: 2 } }]);
      const posts = mcp.requests.filter((request) => request.method === 'POST');
      expect(posts.every((request) => request.headers.authorization === SECRET)).toBe(true);

      // The value is stored (it was sent after a restart) but never shown, put in an event or logged.
      const read = await call(second, 'GET', `/api/agents/${agent.body.id}`);
      expect(read.body.mcpServers[0].headerNames).toEqual(['Authorization']);
      const shown = JSON.stringify([
        read.body,
        (await call(second, 'GET', '/api/events?limit=100')).body,
        first.output(),
        first.stderr(),
        second.output(),
        second.stderr(),
      ]);
      expect(shown).not.toContain('mcp-shared-secret');
      expect(second.output()).toContain('reply stored');
    });
  });
}
