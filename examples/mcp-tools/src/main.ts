/**
 * @module Example: an agent that calls the tools of an MCP server (docs/mcp.md). The server is built
 * with the MCP SDK's `McpServer` over Streamable HTTP on loopback and wants a bearer token; the agent
 * gets it as a write-only header. The reply looks an order up at once and waits for an approval
 * before refunding it. The language model is scripted (no provider needed): it asks for the tools a
 * real model would.
 * Run it: `npm run build && npm start -w @parley-examples/mcp-tools`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Message } from '@parley/core';
import { scriptedModel } from '@parley/core/testing';
import * as z from 'zod';

const TOKEN = 'Bearer shop-token';

/** The shop's MCP server: `lookup_order` (structured output) and `refund_order`, behind a bearer token. */
export async function startShopServer(): Promise<{ url: string; refunds: string[]; server: Server }> {
  const refunds: string[] = [];
  const server = createServer(async (req, res) => {
    if (req.headers.authorization !== TOKEN) return void res.writeHead(401).end();
    // Stateless: a new MCP server and transport per request.
    const mcp = new McpServer({ name: 'shop', version: '1.0.0' });
    mcp.registerTool(
      'lookup_order',
      {
        description: 'The status of an order',
        inputSchema: { orderId: z.string() },
        outputSchema: { orderId: z.string(), status: z.string() },
      },
      async ({ orderId }) => {
        const structuredContent = { orderId, status: 'delivered damaged' };
        return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
      },
    );
    mcp.registerTool(
      'refund_order',
      { description: 'Refunds an order', inputSchema: { orderId: z.string() } },
      async ({ orderId }) => {
        refunds.push(orderId);
        return { content: [{ type: 'text', text: `Order ${orderId} refunded.` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, refunds, server };
}

/** A model that looks the order up, then asks to refund it, then answers from the last result. */
const model = scriptedModel((request) => {
  const last = request.messages.at(-1)!;
  const tools = request.tools?.map((tool) => tool.name) ?? [];
  if (last.role === 'user') {
    return { toolCalls: [{ id: 'c1', name: 'shop__lookup_order', arguments: { orderId: 'A-17' } }] };
  }
  if (last.role === 'tool' && last.toolName === 'shop__lookup_order') {
    return { toolCalls: [{ id: 'c2', name: 'shop__refund_order', arguments: { orderId: 'A-17' } }] };
  }
  return { deltas: [`Done (${tools.join(', ')}): ${last.content}`] };
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the walkthrough, telling `log` what happens; resolves with the refunds the shop made. */
export async function main(log: (line: string) => void = console.log): Promise<string[]> {
  const shop = await startShopServer();
  // The MCP server is on loopback: allow private URLs (a public server needs no such setting).
  const core = createCore(memoryAdapters(), {
    models: { 'demo-llm': model },
    allowPrivateWebhookUrls: true,
    workers: { relay: { pollMs: 20 }, replies: { pollMs: 20 } },
  });
  core.workers.start();
  const scope = { workspaceId: 'acme' };
  try {
    const agent = await core.agents.create(scope, {
      name: 'Shop assistant',
      description: 'Answers order questions',
      model: 'demo-llm',
      mcpServers: [
        {
          label: 'shop',
          url: shop.url,
          headers: { Authorization: TOKEN },
          requireApproval: { never: ['lookup_order'] },
        },
      ],
    });
    log(`agent ${agent.name}: MCP server ${JSON.stringify(agent.mcpServers[0])}`);
    const conversation = await core.conversations.create(scope, { agentId: agent.id });
    await core.conversations.sendMessage(scope, conversation.id, { role: 'user', content: 'My order A-17 broke.' });

    // The lookup is made at once; the refund waits for a person.
    let pending = (await core.conversations.get(scope, conversation.id)).pendingToolCalls;
    for (let waited = 0; pending.length === 0 && waited < 10_000; waited += 20) {
      await sleep(20);
      pending = (await core.conversations.get(scope, conversation.id)).pendingToolCalls;
    }
    const [call] = pending;
    if (!call) throw new Error('The reply did not pause for an approval.');
    log(`waiting for approval: ${call.server}/${call.name} ${JSON.stringify(call.arguments)} (${call.kind})`);
    await core.replies.submitToolResults(scope, conversation.id, {
      results: [{ toolCallId: call.id, approved: true }],
    });

    let messages: Message[] = [];
    for (let waited = 0; waited < 10_000; waited += 20) {
      messages = (await core.conversations.history(scope, conversation.id, { limit: 20 })).messages;
      if (messages.at(-1)?.role === 'assistant' && messages.at(-1)?.content !== '') break;
      await sleep(20);
    }
    for (const message of messages) log(`${message.role}: ${message.content || JSON.stringify(message.toolCalls)}`);
    return shop.refunds;
  } finally {
    await core.workers.stop();
    shop.server.closeAllConnections();
    shop.server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
