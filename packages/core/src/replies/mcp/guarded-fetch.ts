/**
 * @module The `fetch` MCP clients use (docs/mcp.md#connections): undici with the webhook transport's
 * server-side request forgery guard on the address actually connected to, a deadline on every
 * request, POST answers read whole up to a size limit, and no long-lived `GET` event stream.
 */
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { guardedLookup, refusal, resolverLookup } from '../../delivery/undici-transport.js';
import type { HostResolver } from '../../ports/webhook-targets.js';
import { nonPublicAddressKind } from '../../services/webhook-targets.js';

/** A `fetch` as the MCP SDK's transports take it. */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The JSON-RPC error code of an answer replaced for being too large (implementation-defined range;
 * not the SDK's own -32000 "connection closed" or -32001 "request timeout").
 */
export const MCP_TOO_LARGE_CODE = -32_050;

/** Options of {@link guardedMcpFetch}. */
export interface GuardedMcpFetchOptions {
  /** Connect to loopback, private and other non-public addresses too (default `false`). */
  allowPrivate?: boolean;
  /** Where host names are resolved when connecting (default the operating system's resolver). */
  resolver?: HostResolver;
  /** Deadline of one request, connect to last byte, in ms. */
  timeoutMs: number;
  /** Deadline of the TCP (and TLS) connection, in ms. */
  connectTimeoutMs: number;
  /** The largest answer read, in bytes: a larger one becomes a JSON-RPC error for its request. */
  maxResponseBytes: number;
}

/** A guarded fetch that can release its connections. */
export interface GuardedMcpFetch {
  fetch: McpFetch;
  close(): Promise<void>;
}

/** Thrown for a refused target (a non-public address); its message is safe to show and log. */
export class McpRefusedTarget extends Error {
  override readonly name = 'McpRefusedTarget';
}

/** Thrown when a request took longer than its deadline. */
export class McpRequestTimeout extends Error {
  override readonly name = 'McpRequestTimeout';
}

/**
 * A fetch for the MCP SDK's Streamable HTTP client transport:
 * - unless `allowPrivate`, no connection to a non-public address (IP literals checked up front,
 *   names inside the connection's DNS lookup, as webhook deliveries: `undiciTransport`);
 * - every request ends within `timeoutMs`;
 * - the answer of a POST (JSON or an event stream, which ends with the response) is read whole, at
 *   most `maxResponseBytes`: a larger one is replaced by a JSON-RPC error answering the request,
 *   so the caller gets a clear error, not a 10 MB string;
 * - a `GET` (the optional stream of server-initiated messages) is answered `405` without a
 *   request: Parley sends requests and reads their answers, and keeps no connection open.
 */
export function guardedMcpFetch(options: GuardedMcpFetchOptions): GuardedMcpFetch {
  const allowPrivate = options.allowPrivate ?? false;
  const agent = new Agent({
    connect: {
      timeout: options.connectTimeoutMs,
      ...(allowPrivate
        ? options.resolver
          ? { lookup: resolverLookup(options.resolver) }
          : {}
        : { lookup: guardedLookup(options.resolver) }),
    },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const fetch: McpFetch = async (input, init = {}) => {
    const url = new URL(input);
    const method = (init.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    if (!allowPrivate) {
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const kind = isIP(host) !== 0 ? nonPublicAddressKind(host) : null;
      if (kind) throw new McpRefusedTarget(refusal(kind).message);
    }
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    try {
      const response = await undiciFetch(url, {
        ...(init as object),
        method,
        signal,
        redirect: init.redirect ?? 'manual',
        dispatcher: agent,
      } as Parameters<typeof undiciFetch>[1]);
      if (method !== 'POST' || !response.body || !response.ok) return response as unknown as Response;
      const body = await readCapped(response.body as ReadableStream<Uint8Array>, options.maxResponseBytes);
      if (body === null) return tooLarge(init.body, options.maxResponseBytes);
      return new Response(body as unknown as ConstructorParameters<typeof Response>[0], {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers as unknown as Headers,
      });
    } catch (error) {
      if (deadline.aborted && !init.signal?.aborted)
        throw new McpRequestTimeout(`The MCP server did not answer within ${options.timeoutMs / 1000} s.`);
      throw unwrapRefusal(error) ?? error;
    }
  };
  return { fetch, close: () => agent.close() };
}

/** The refusal inside a fetch failure (undici wraps the connector's error as `cause`), if it is one. */
function unwrapRefusal(error: unknown): McpRefusedTarget | null {
  const seen = new Set<unknown>();
  for (let current = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    if ((current as { code?: unknown }).code === 'PARLEY_REFUSED_TARGET') return new McpRefusedTarget(current.message);
  }
  return null;
}

/** The whole of `body`, or `null` once it is longer than `limit` bytes (the rest is not read). */
async function readCapped(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The JSON-RPC error answering the request in `body` when its answer was over `limit` bytes. */
function tooLarge(body: unknown, limit: number): Response {
  let id: unknown = null;
  try {
    const message = JSON.parse(typeof body === 'string' ? body : '') as { id?: unknown };
    id = message.id ?? null;
  } catch {
    // A body Parley did not write as text: nothing to answer.
  }
  if (id === null) return new Response(null, { status: 202 });
  const error = {
    jsonrpc: '2.0',
    id,
    error: {
      code: MCP_TOO_LARGE_CODE,
      message: `The MCP server's answer is larger than ${Math.round(limit / 1024)} KiB.`,
    },
  };
  return new Response(JSON.stringify(error), { status: 200, headers: { 'content-type': 'application/json' } });
}
