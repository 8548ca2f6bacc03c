/**
 * @module An agent's MCP servers (docs/mcp.md): the `mcpServers` field of agent create and PATCH, and
 * how the API shows it (header names only). The single source of their validation.
 */
import * as v from 'valibot';
import type { McpApproval, McpServer } from '../types.js';
import { UrlSchema } from './webhook.js';

/** Most MCP servers an agent may have. */
export const MAX_MCP_SERVERS = 8;
/** Most headers one MCP server entry may carry. */
export const MAX_MCP_HEADERS = 16;
/** Most names an `allowedTools` or `requireApproval.never` list may hold. */
export const MAX_MCP_TOOL_NAMES = 128;

/** Headers Parley sets itself on every MCP request (the transport's own): refused as configured headers. */
export const RESERVED_MCP_HEADERS: readonly string[] = [
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'transfer-encoding',
];

const LABEL = /^[a-zA-Z0-9_-]{1,32}$/;
/** An HTTP field name (RFC 9110 §5.1, a token), at most 64 characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** A field value without control characters but horizontal tab (RFC 9110 §5.5), no leading or trailing whitespace. */
const HEADER_VALUE = /^(?:[\x21-\x7e\x80-\uffff](?:[\t\x20-\x7e\x80-\uffff]*[\x21-\x7e\x80-\uffff])?)?$/;
/** An MCP tool name (the MCP specification: 1–128 characters of letters, digits, `_`, `-` and `.`). */
const TOOL_NAME = /^[a-zA-Z0-9_.-]{1,128}$/;

const ToolNamesSchema = v.pipe(
  v.array(v.pipe(v.string(), v.regex(TOOL_NAME, 'Expected an MCP tool name: 1–128 letters, digits, "_", "-" or ".".'))),
  v.maxLength(MAX_MCP_TOOL_NAMES, `Expected at most ${MAX_MCP_TOOL_NAMES} tool names.`),
  v.check((names) => new Set(names).size === names.length, 'Expected distinct tool names.'),
);

const HeadersSchema = v.pipe(
  v.record(
    v.pipe(
      v.string(),
      v.regex(HEADER_NAME, 'Expected an HTTP header name (1–64 token characters).'),
      v.check(
        (name) => !RESERVED_MCP_HEADERS.includes(name.toLowerCase()),
        'This header is set by Parley itself and cannot be configured.',
      ),
    ),
    v.pipe(
      v.string(),
      v.maxLength(8192, 'Expected at most 8192 characters.'),
      // A check, not a regex: the pattern stays out of the OpenAPI document (its `\u` ranges trip some renderers).
      v.check(
        (value) => HEADER_VALUE.test(value),
        'Expected a header value without control characters or surrounding whitespace.',
      ),
    ),
  ),
  v.check((headers) => Object.keys(headers).length <= MAX_MCP_HEADERS, `Expected at most ${MAX_MCP_HEADERS} headers.`),
  v.check(
    (headers) => new Set(Object.keys(headers).map((name) => name.toLowerCase())).size === Object.keys(headers).length,
    'Expected header names that differ in more than letter case.',
  ),
  v.description(
    'Headers sent with every request to the server, e.g. `{"Authorization": "Bearer …"}`. Write-only: ' +
      'stored and sent, never returned (responses list `headerNames`), never logged or put in events.',
  ),
);

const ApprovalSchema = v.union(
  [v.picklist(['always', 'never']), v.strictObject({ never: ToolNamesSchema })],
  'Expected "always", "never" or {"never": [tool names]}.',
);

/** One MCP server of an agent's create or PATCH body. Unknown fields are refused. */
export const McpServerInputSchema = v.strictObject({
  label: v.pipe(
    v.string(),
    v.regex(LABEL, 'Expected 1–32 letters, digits, "_" or "-".'),
    v.description("Names the server: the model sees its tools as `<label>__<tool>`. Unique among the agent's servers."),
  ),
  // Refused at create and PATCH when it points at a non-public address, and checked again on every connection.
  url: UrlSchema,
  headers: v.optional(HeadersSchema),
  allowedTools: v.optional(
    v.pipe(
      ToolNamesSchema,
      v.description("The only tools of the server the model sees; absent: all of the server's tools."),
    ),
  ),
  requireApproval: v.optional(
    v.pipe(
      ApprovalSchema,
      v.description(
        'Which calls wait for approval (`POST /api/conversations/{id}/tool-results`): "always" (the default), ' +
          '"never", or {"never": [tool names]} (always but for those).',
      ),
    ),
  ),
});
export type McpServerInput = v.InferOutput<typeof McpServerInputSchema>;

/** An agent's `mcpServers` in a create or PATCH body: at most 8, distinct labels. */
export const McpServersInputSchema = v.pipe(
  v.array(McpServerInputSchema),
  v.maxLength(MAX_MCP_SERVERS, `Expected at most ${MAX_MCP_SERVERS} MCP servers.`),
  v.check(
    (servers) => new Set(servers.map((server) => server.label)).size === servers.length,
    'Expected distinct labels.',
  ),
  v.description(
    `The MCP servers whose tools the agent may call (docs/mcp.md), at most ${MAX_MCP_SERVERS} with distinct labels; ` +
      '`[]` by default. A PATCH replaces the whole list, header values included.',
  ),
);

/** One MCP server as the API shows it: the names of its headers, never their values. */
export const McpServerSchema = v.object({
  label: v.string(),
  url: v.string(),
  headerNames: v.pipe(
    v.array(v.string()),
    v.description('The names of the headers sent to the server; their values are write-only.'),
  ),
  allowedTools: v.optional(v.array(v.string())),
  requireApproval: v.union([v.picklist(['always', 'never']), v.object({ never: v.array(v.string()) })]),
});

/** Exactly `A` and `B` are one type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The view's schema is the record type `McpServer` (types.ts): changing one alone fails to compile.
void (true satisfies Same<v.InferOutput<typeof McpServerSchema>, McpServer>);

/** An agent's `mcpServers` as the API shows them. */
export const McpServersSchema = v.pipe(
  v.array(McpServerSchema),
  v.description(
    'The MCP servers whose tools the agent may call (docs/mcp.md), `[]` when none; header values are never shown.',
  ),
);

/**
 * The stored form of validated `mcpServers`: the servers as the API shows them, and their header
 * values by label (the agent's hidden `mcpHeaders`).
 */
export function storedMcpServers(servers: readonly McpServerInput[]): {
  mcpServers: McpServer[];
  mcpHeaders: Record<string, Record<string, string>>;
} {
  const mcpHeaders: Record<string, Record<string, string>> = {};
  const mcpServers = servers.map((server): McpServer => {
    const headers = server.headers ?? {};
    if (Object.keys(headers).length > 0) mcpHeaders[server.label] = { ...headers };
    const requireApproval: McpApproval = server.requireApproval ?? 'always';
    return {
      label: server.label,
      url: server.url,
      headerNames: Object.keys(headers),
      ...(server.allowedTools !== undefined && { allowedTools: server.allowedTools }),
      requireApproval,
    };
  });
  return { mcpServers, mcpHeaders };
}
