/**
 * @module An agent's `mcpServers` (docs/mcp.md): what create accepts and refuses and where the error
 * points, the stored form (header values apart), and how an MCP result becomes a stored tool result.
 */
import { describe, expect, it } from 'vitest';
import { issuePaths, rejection } from '../test-support/errors.js';
import type { McpClients, McpToolInfo } from '../replies/mcp/mcp-clients.js';
import { agentMcpTools, mcpNeedsApproval, mcpResultText } from '../replies/mcp/mcp-tools.js';
import type { AgentRecord } from '../types.js';
import { parse } from '../validation.js';
import { AgentCreateSchema } from './agent.js';
import { storedMcpServers } from './mcp.js';

const shop = { label: 'shop', url: 'https://mcp.shop.example.com/mcp' };
const body = (mcpServers: unknown) => ({ name: 'A', description: '', model: 'modelA-4', mcpServers });
const paths = async (mcpServers: unknown) =>
  issuePaths(await rejection(Promise.resolve().then(() => parse(AgentCreateSchema, body(mcpServers)))));

describe('agent mcpServers', () => {
  it('accepts servers with headers, allowedTools and each form of requireApproval', () => {
    const servers = [
      { ...shop, headers: { Authorization: 'Bearer x', 'X-Team': 'a b' }, allowedTools: ['lookup.order', 'refund'] },
      { label: 'docs-2', url: 'http://docs.example.com/mcp', requireApproval: 'never' },
      { label: 'k_3', url: 'https://k.example.com/', requireApproval: { never: ['search'] } },
    ];
    expect(parse(AgentCreateSchema, body(servers))).toEqual(body(servers));
  });

  it.each([
    ['a label with a space', [{ ...shop, label: 'my shop' }], ['mcpServers.0.label']],
    ['a label of 33 characters', [{ ...shop, label: 'x'.repeat(33) }], ['mcpServers.0.label']],
    ['a duplicate label', [shop, { ...shop, url: 'https://other.example.com/' }], ['mcpServers']],
    ['nine servers', Array.from({ length: 9 }, (_, i) => ({ ...shop, label: `s${i}` })), ['mcpServers']],
    ['a missing url', [{ label: 'shop' }], ['mcpServers.0.url']],
    ['a url that is not http(s)', [{ ...shop, url: 'ftp://x.example.com/' }], ['mcpServers.0.url']],
    ['a url with credentials', [{ ...shop, url: 'https://u:p@x.example.com/' }], ['mcpServers.0.url']],
    ['an unknown field', [{ ...shop, server_url: 'x' }], ['mcpServers.0.server_url']],
    [
      'a header Parley sets',
      [{ ...shop, headers: { 'Mcp-Session-Id': 'x' } }],
      ['mcpServers.0.headers.Mcp-Session-Id'],
    ],
    ['a header name with a space', [{ ...shop, headers: { 'X Team': 'x' } }], ['mcpServers.0.headers.X Team']],
    ['a header value with a line break', [{ ...shop, headers: { 'X-A': 'a\r\nB: c' } }], ['mcpServers.0.headers.X-A']],
    ['a header value that is not a string', [{ ...shop, headers: { 'X-A': 1 } }], ['mcpServers.0.headers.X-A']],
    ['headers differing in case only', [{ ...shop, headers: { 'X-A': 'a', 'x-a': 'b' } }], ['mcpServers.0.headers']],
    ['a bad tool name in allowedTools', [{ ...shop, allowedTools: ['a b'] }], ['mcpServers.0.allowedTools.0']],
    ['an unknown requireApproval', [{ ...shop, requireApproval: 'sometimes' }], ['mcpServers.0.requireApproval']],
    ['requireApproval {always}', [{ ...shop, requireApproval: { always: ['x'] } }], ['mcpServers.0.requireApproval']],
  ])('refuses %s at its path', async (_, servers, expected) => {
    expect(await paths(servers)).toEqual(expected);
  });

  it('stores the servers as shown (header names, approval default "always") and the header values apart', () => {
    const servers = parse(AgentCreateSchema, body([{ ...shop, headers: { Authorization: 'Bearer x' } }])).mcpServers!;
    expect(storedMcpServers(servers)).toEqual({
      mcpServers: [{ ...shop, headerNames: ['Authorization'], requireApproval: 'always' }],
      mcpHeaders: { shop: { Authorization: 'Bearer x' } },
    });
  });

  it('asks approval as requireApproval says', () => {
    const server = { ...shop, headerNames: [] };
    expect(mcpNeedsApproval({ ...server, requireApproval: 'always' }, 'a')).toBe(true);
    expect(mcpNeedsApproval({ ...server, requireApproval: 'never' }, 'a')).toBe(false);
    expect(mcpNeedsApproval({ ...server, requireApproval: { never: ['a'] } }, 'a')).toBe(false);
    expect(mcpNeedsApproval({ ...server, requireApproval: { never: ['a'] } }, 'b')).toBe(true);
  });
});

describe('MCP results as stored tool results', () => {
  it('stores structuredContent as JSON, else the text parts joined, naming other parts', () => {
    expect(mcpResultText({ content: [{ type: 'text', text: '{}' }], structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(
      mcpResultText({
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: 'two' },
        ],
      }),
    ).toBe('one\n[image content left out]\ntwo');
  });

  it('gives an isError result as {"error": text}, repairs unstorable strings and refuses an oversized result', () => {
    expect(mcpResultText({ isError: true, content: [{ type: 'text', text: 'down' }] })).toBe('{"error":"down"}');
    expect(mcpResultText({ isError: true, content: [] })).toBe('{"error":"The tool failed."}');
    expect(mcpResultText({ content: [{ type: 'text', text: 'a\u0000b\ud800' }] })).toBe('a\ufffdb\ufffd');
    expect(JSON.parse(mcpResultText({ content: [{ type: 'text', text: 'x'.repeat(100_001) }] }))).toEqual({
      error: "The MCP tool's result is longer than 100000 characters.",
    });
  });
});

describe('the MCP tools a model is offered', () => {
  /** Servers that list fixed tools (the listing itself is tested against a real MCP server in @parley/http). */
  const lists = (byUrl: Record<string, McpToolInfo[]>): McpClients => ({
    listTools: async (_scope, target) => byUrl[target.url] ?? [],
    callTool: async () => ({ content: [] }),
    close: async () => undefined,
  });
  const object = { type: 'object', properties: {} };
  const agent = (mcpServers: AgentRecord['mcpServers'], tools: AgentRecord['tools'] = []) =>
    ({ mcpServers, tools }) as AgentRecord;

  it('names tools <label>__<tool>, keeps allowedTools only, and leaves out names providers refuse, non-object schemas and names taken', async () => {
    const clients = lists({
      'https://a.example.com/': [
        { name: 'search', description: 'Search', inputSchema: object },
        { name: 'fetch.page', description: 'Dots are not accepted', inputSchema: object },
        { name: 'lies', description: 'Schema of a string', inputSchema: { type: 'string' } },
        { name: 'hidden', description: 'Not allowed', inputSchema: object },
        { name: 'taken', description: 'Clashes with an agent tool', inputSchema: object },
      ],
    });
    const server = { label: 'a', url: 'https://a.example.com/', headerNames: [], requireApproval: 'never' as const };
    const allowed = { ...server, allowedTools: ['search', 'fetch.page', 'lies', 'taken'] };
    const found = await agentMcpTools(clients, { workspaceId: 'ws' }, agent([allowed]), {
      reserved: new Set(['a__taken']),
    });
    expect(found.tools).toEqual([{ name: 'a__search', description: 'Search', parameters: object }]);
    expect([...found.targets]).toEqual([['a__search', { server: 'a', name: 'search' }]]);
    expect(found.skipped.map((entry) => entry.tool)).toEqual(['fetch.page', 'lies', 'taken']);
  });

  it('names the server that cannot list its tools', async () => {
    const failing: McpClients = { ...lists({}), listTools: async () => Promise.reject(new Error('boom')) };
    const server = { label: 'b', url: 'https://b.example.com/', headerNames: [], requireApproval: 'always' as const };
    await expect(
      agentMcpTools(failing, { workspaceId: 'ws' }, agent([server]), { reserved: new Set() }),
    ).rejects.toThrow("The MCP server 'b' could not list its tools: The MCP server could not be used.");
  });
});
