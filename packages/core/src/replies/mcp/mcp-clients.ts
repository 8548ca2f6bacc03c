/**
 * @module MCP clients (docs/mcp.md): the Model Context Protocol SDK's `Client` over Streamable HTTP,
 * one session per server, URL and headers, kept between replies; tool lists cached up to 60 s; an
 * expired session (HTTP 404) started again and the request retried once; 30 s deadlines.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import { describeFailure } from '../../delivery/undici-transport.js';
import type { WorkspaceScope } from '../../ports/scope.js';
import type { HostResolver } from '../../ports/webhook-targets.js';
import type { JsonObject } from '../../types.js';
import {
  guardedMcpFetch,
  MCP_TOO_LARGE_CODE,
  McpRefusedTarget,
  McpRequestTimeout,
  type GuardedMcpFetch,
} from './guarded-fetch.js';

/** Deadline of every MCP request and connection, in ms (docs/mcp.md). */
export const MCP_TIMEOUT_MS = 30_000;
/** Deadline of the TCP (and TLS) connection to an MCP server, in ms. */
export const MCP_CONNECT_TIMEOUT_MS = 5_000;
/** How long a server's tool list is used before it is asked again, in ms. */
export const MCP_TOOLS_TTL_MS = 60_000;
/** The largest answer read from an MCP server, in bytes (2 MiB). */
export const MCP_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Most pages of a tool list read (`tools/list` with `nextCursor`). */
const MAX_TOOL_PAGES = 10;
/** A session unused this long is closed, in ms. */
const IDLE_MS = 5 * 60_000;

/** The SDK's classes that are used at run time. */
interface Sdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ErrorCode: typeof import('@modelcontextprotocol/sdk/types.js').ErrorCode;
}

/** The SDK once loaded: errors can only come from it after that. */
let sdk: Sdk | undefined;

/**
 * Loads the SDK at the first session, not at start-up: with its schema libraries it is about 20 MiB
 * of resident memory and a quarter of a second, which a server whose agents use no MCP server
 * never needs (docs/mcp.md).
 */
async function loadSdk(): Promise<Sdk> {
  if (sdk) return sdk;
  const [client, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return (sdk = {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  });
}

/** Where an MCP server is and what to send it: an agent's server with its header values. */
export interface McpTarget {
  label: string;
  url: string;
  /** Sent with every request; secrets: never logged, shown or put in an error. */
  headers: Record<string, string>;
}

/** A tool an MCP server offers: its name there, what it does, and its arguments' JSON Schema. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/** The result of an MCP tool call (`tools/call`), as the server sent it. */
export type McpCallResult = Pick<CallToolResult, 'content' | 'structuredContent' | 'isError'>;

/**
 * Raised for an MCP server that could not be used: unreachable, refused, too slow, an HTTP error,
 * an answer that is not MCP, or a JSON-RPC error. The message is safe to log and to give the model:
 * it never holds a header value (and the server's own words only for a JSON-RPC error).
 */
export class McpFailure extends Error {
  override readonly name = 'McpFailure';
  /** A short class of the failure for logs: `refused`, `timeout`, `http`, `protocol`, `unreachable`, `server`, `too_large`, `aborted`. */
  readonly kind: string;
  constructor(kind: string, message: string) {
    super(message);
    this.kind = kind;
  }
}

/**
 * The MCP client side of replies: lists a server's tools and calls them. `scope` is the workspace
 * the agent belongs to: sessions and cached lists are never shared between workspaces.
 */
export interface McpClients {
  /**
   * The server's tools (every page of `tools/list`), from a cache of at most 60 s.
   * @throws McpFailure
   */
  listTools(scope: WorkspaceScope, target: McpTarget, options?: { signal?: AbortSignal }): Promise<McpToolInfo[]>;
  /**
   * Calls one tool (`tools/call`). Resolves with the server's result, `isError` ones included.
   * @throws McpFailure
   */
  callTool(
    scope: WorkspaceScope,
    target: McpTarget,
    call: { name: string; arguments: JsonObject },
    options?: { signal?: AbortSignal },
  ): Promise<McpCallResult>;
  /** Ends every session and releases the connections. */
  close(): Promise<void>;
}

/** Options of {@link sdkMcpClients}. */
export interface SdkMcpClientsOptions {
  /** Connect to loopback and private addresses too (default `false`; `WEBHOOK_ALLOW_PRIVATE_URLS`). */
  allowPrivate?: boolean;
  /** Where host names are resolved when connecting (default the operating system's resolver). */
  resolver?: HostResolver;
  /** Deadline of each request and connection, in ms (default {@link MCP_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** How long a tool list is cached, in ms (default {@link MCP_TOOLS_TTL_MS}). */
  toolsTtlMs?: number;
  /** The largest answer read, in bytes (default {@link MCP_MAX_RESPONSE_BYTES}). */
  maxResponseBytes?: number;
  /** What identifies Parley to servers (`clientInfo` of `initialize`). */
  clientInfo?: { name: string; version: string };
}

/** One session with a server: a connected SDK client. */
interface Session {
  client: Client;
  idle?: ReturnType<typeof setTimeout>;
}

/**
 * {@link McpClients} on `@modelcontextprotocol/sdk` (v1, Streamable HTTP). Sessions are kept per
 * workspace, URL and headers (never shared across different credentials) and closed after 5 minutes
 * unused. A request answered HTTP 404 (the server forgot the session, as the MCP specification says
 * it answers then) starts a new session and is sent once more. Connections go through
 * {@link guardedMcpFetch}: the SSRF guard, 30 s deadlines, answers of at most 2 MiB.
 */
export function sdkMcpClients(options: SdkMcpClientsOptions = {}): McpClients {
  const timeoutMs = options.timeoutMs ?? MCP_TIMEOUT_MS;
  const ttlMs = options.toolsTtlMs ?? MCP_TOOLS_TTL_MS;
  const clientInfo = options.clientInfo ?? { name: 'parley', version: '1' };
  let guarded: GuardedMcpFetch | undefined;
  const http = () =>
    (guarded ??= guardedMcpFetch({
      allowPrivate: options.allowPrivate ?? false,
      ...(options.resolver && { resolver: options.resolver }),
      timeoutMs,
      connectTimeoutMs: Math.min(MCP_CONNECT_TIMEOUT_MS, timeoutMs),
      maxResponseBytes: options.maxResponseBytes ?? MCP_MAX_RESPONSE_BYTES,
    }));
  const sessions = new Map<string, Promise<Session>>();
  const lists = new Map<string, { tools: McpToolInfo[]; until: number }>();

  const keyOf = (scope: WorkspaceScope, target: McpTarget) => {
    const headers = Object.entries(target.headers)
      .map(([name, value]) => [name.toLowerCase(), value])
      .sort(([a], [b]) => (a! < b! ? -1 : 1));
    return createHash('sha256')
      .update(JSON.stringify([scope.workspaceId, target.url, headers]))
      .digest('hex');
  };

  async function open(target: McpTarget, signal?: AbortSignal): Promise<Session> {
    const { Client, StreamableHTTPClientTransport } = await loadSdk();
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      fetch: http().fetch,
      requestInit: { headers: { ...target.headers } },
      // Parley never reads the server's own event stream (the fetch answers its GET with 405).
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1,
        maxReconnectionDelay: 1,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const client = new Client(clientInfo, { capabilities: {} });
    // Transport errors also reject the request they belong to; nothing else needs them.
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: timeoutMs, ...(signal && { signal }) });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    return { client };
  }

  function session(key: string, target: McpTarget, signal?: AbortSignal): Promise<Session> {
    let found = sessions.get(key);
    if (!found) {
      found = open(target, signal);
      sessions.set(key, found);
      found.catch(() => {
        if (sessions.get(key) === found) sessions.delete(key);
      });
    }
    return found;
  }

  function drop(key: string, dropped: Promise<Session>): void {
    if (sessions.get(key) === dropped) sessions.delete(key);
    void dropped.then(
      (entry) => {
        if (entry.idle) clearTimeout(entry.idle);
        return entry.client.close();
      },
      () => undefined,
    );
  }

  /** Runs `request` in the target's session; a 404 (session expired) opens a new one and runs it once more. */
  async function inSession<T>(
    scope: WorkspaceScope,
    target: McpTarget,
    signal: AbortSignal | undefined,
    request: (client: Client) => Promise<T>,
  ): Promise<T> {
    const key = keyOf(scope, target);
    for (let attempt = 1; ; attempt += 1) {
      const current = session(key, target, signal);
      let entry: Session;
      try {
        entry = await current;
      } catch (error) {
        throw failure(error, timeoutMs);
      }
      if (entry.idle) clearTimeout(entry.idle);
      try {
        return await request(entry.client);
      } catch (error) {
        // A JSON-RPC error comes from a working session; anything else may have broken it.
        const { StreamableHTTPError, McpError, ErrorCode } = sdk!;
        const expired = error instanceof StreamableHTTPError && error.code === 404;
        if (!(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed) drop(key, current);
        if (expired && attempt === 1 && !signal?.aborted) continue;
        throw failure(error, timeoutMs);
      } finally {
        if (sessions.get(key) === current) {
          entry.idle = setTimeout(() => drop(key, current), IDLE_MS);
          entry.idle.unref?.();
        }
      }
    }
  }

  const requestOptions = (signal?: AbortSignal) => ({
    timeout: timeoutMs,
    maxTotalTimeout: timeoutMs,
    ...(signal && { signal }),
  });

  return {
    async listTools(scope, target, { signal } = {}) {
      const key = keyOf(scope, target);
      const cached = lists.get(key);
      if (cached && cached.until > Date.now()) return cached.tools;
      const tools = await inSession(scope, target, signal, async (client) => {
        const found: SdkTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
          const result = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions(signal));
          found.push(...result.tools);
          cursor = result.nextCursor;
          if (cursor === undefined) break;
        }
        return found.map((tool): McpToolInfo => ({
          name: tool.name,
          description: tool.description ?? tool.title ?? '',
          inputSchema: tool.inputSchema as JsonObject,
        }));
      });
      lists.set(key, { tools, until: Date.now() + ttlMs });
      return tools;
    },

    async callTool(scope, target, call, { signal } = {}) {
      return inSession(scope, target, signal, async (client) => {
        const result = (await client.callTool(
          { name: call.name, arguments: call.arguments },
          undefined,
          requestOptions(signal),
        )) as McpCallResult;
        return { content: result.content ?? [], structuredContent: result.structuredContent, isError: result.isError };
      });
    },

    async close() {
      const open = [...sessions.entries()];
      sessions.clear();
      lists.clear();
      for (const [key, entry] of open) drop(key, entry);
      await Promise.allSettled(open.map(([, entry]) => entry.then((found) => found.client.close())));
      await guarded?.close();
      guarded = undefined;
    },
  };
}

/** What went wrong, in words safe to log and to give the model (no header value, no URL). */
function failure(error: unknown, timeoutMs: number): McpFailure {
  if (error instanceof McpFailure) return error;
  if (error instanceof McpRefusedTarget) return new McpFailure('refused', error.message);
  if (error instanceof McpRequestTimeout) return new McpFailure('timeout', error.message);
  // Without the SDK loaded, no error is one of its classes.
  const { StreamableHTTPError, McpError, ErrorCode } = sdk ?? {};
  if (StreamableHTTPError && error instanceof StreamableHTTPError) {
    return error.code !== undefined && error.code > 0
      ? new McpFailure('http', `The MCP server answered HTTP ${error.code}.`)
      : new McpFailure('protocol', 'The MCP server answered with a content type that is not MCP.');
  }
  if (McpError && ErrorCode && error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new McpFailure('timeout', `The MCP server did not answer within ${timeoutMs / 1000} s.`);
    if (error.code === ErrorCode.ConnectionClosed)
      return new McpFailure('unreachable', 'The connection to the MCP server was closed.');
    const said = error.message.replace(/^MCP error -?\d+: /, '').slice(0, 1_000);
    if (error.code === MCP_TOO_LARGE_CODE) return new McpFailure('too_large', said);
    // The server's own words: what it says is wrong with the request (an unknown tool, bad arguments).
    return new McpFailure('server', `The MCP server answered with an error: ${said}`);
  }
  if (error instanceof Error) {
    if (error.name === 'AbortError') return new McpFailure('aborted', 'The call was abandoned: the reply stopped.');
    if (error.name === 'ZodError' || error instanceof SyntaxError)
      return new McpFailure('protocol', 'The MCP server sent an answer that is not valid MCP.');
    const described = describeFailure(error, false, timeoutMs, MCP_CONNECT_TIMEOUT_MS);
    if (described !== 'Request failed.')
      return new McpFailure('unreachable', `The MCP server could not be reached: ${described}`);
  }
  return new McpFailure('unreachable', 'The MCP server could not be used.');
}
