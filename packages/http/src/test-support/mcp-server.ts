/**
 * @module A real MCP server on loopback for tests, built with the MCP SDK's own `McpServer` and
 * Streamable HTTP server transport (stateful sessions). Its tools: `get_weather` (text),
 * `forecast` (structured output), `fail` (an `isError` result), `slow` (answers after `ms`),
 * `huge` (a 10 MB text result). It records the headers of each request and the calls made, and can
 * forget its sessions (`expireSessions`), after which a request with an old session id is answered
 * 404 as the MCP specification says. Not built.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

/** A running test MCP server. */
export interface TestMcpServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Headers of every HTTP request received, in order. */
  requests: Array<{ method: string; headers: IncomingHttpHeaders }>;
  /** Every tool call, in order: the tool's name and its arguments. */
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
  /** How many sessions were initialised. */
  sessions(): number;
  /** How many requests named a session the server had forgotten (answered 404). */
  expiredRequests(): number;
  /** Forgets every session: the next request of each is answered 404. */
  expireSessions(): void;
  /** Ends every connection, so a test can simulate the server going down, then `close`s. */
  close(): Promise<void>;
}

function mcpServer(calls: TestMcpServer['calls']): McpServer {
  const server = new McpServer({ name: 'parley-test-mcp', version: '1.0.0' });
  server.registerTool(
    'get_weather',
    { description: 'The weather in a city', inputSchema: { city: z.string() } },
    async ({ city }) => {
      calls.push({ name: 'get_weather', arguments: { city } });
      return { content: [{ type: 'text', text: `Sunny in ${city}` }] };
    },
  );
  server.registerTool(
    'forecast',
    {
      description: 'A forecast of several days',
      inputSchema: { city: z.string(), days: z.number().int().min(1).max(7) },
      outputSchema: { city: z.string(), days: z.number(), summary: z.string() },
    },
    async ({ city, days }) => {
      calls.push({ name: 'forecast', arguments: { city, days } });
      const structuredContent = { city, days, summary: `${days} days of sun` };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, async () => {
    calls.push({ name: 'fail', arguments: {} });
    return { isError: true, content: [{ type: 'text', text: 'The database is down.' }] };
  });
  server.registerTool(
    'slow',
    { description: 'Answers after a while', inputSchema: { ms: z.number() } },
    async ({ ms }) => {
      calls.push({ name: 'slow', arguments: { ms } });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  server.registerTool('huge', { description: 'A very large result', inputSchema: {} }, async () => {
    calls.push({ name: 'huge', arguments: {} });
    return { content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] };
  });
  return server;
}

/** Starts a test MCP server on 127.0.0.1 (a free port). */
export async function startTestMcpServer(): Promise<TestMcpServer> {
  const requests: TestMcpServer['requests'] = [];
  const calls: TestMcpServer['calls'] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let initialised = 0;
  let expired = 0;
  const http = createServer((request, response) => {
    void (async () => {
      requests.push({ method: request.method ?? '', headers: request.headers });
      if (!request.url?.startsWith('/mcp')) {
        response.writeHead(404).end();
        return;
      }
      const sessionId = request.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const transport = transports.get(sessionId);
        if (!transport) {
          expired += 1;
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
          );
          return;
        }
        await transport.handleRequest(request, response);
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          initialised += 1;
          transports.set(id, transport);
        },
      });
      await mcpServer(calls).connect(transport);
      await transport.handleRequest(request, response);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    calls,
    sessions: () => initialised,
    expiredRequests: () => expired,
    expireSessions: () => transports.clear(),
    close: async () => {
      const open = [...transports.values()];
      transports.clear();
      await Promise.allSettled(open.map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
