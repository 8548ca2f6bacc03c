/**
 * @module The default {@link WebhookTransport}: one POST over undici with Parley's delivery rules
 * (README "Receiving webhooks"): 15 s total and 5 s connect deadlines, no redirects followed, the
 * first 4 KiB of the response kept, `Retry-After` read on 429/503, and a server-side request
 * forgery guard on the address actually connected to.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import type { HostResolver } from '../ports/webhook-targets.js';
import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../ports/webhook-transport.js';
import { nonPublicAddressKind } from '../services/webhook-targets.js';
import { storableText } from '../validation.js';

/** Deadline of a whole attempt, connect to last body byte read, in ms. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** Deadline of the TCP (and TLS) connection, in ms. */
export const WEBHOOK_CONNECT_TIMEOUT_MS = 5_000;
/** How much of a response body is kept, in bytes. */
export const WEBHOOK_RESPONSE_BODY_BYTES = 4 * 1024;
/** Longest `Retry-After` honoured, in ms (24 h). */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/** How much more of a body is read (and dropped) to keep the connection reusable; past it the socket is closed. */
const DISCARD_LIMIT_BYTES = 64 * 1024;

/** Options of {@link undiciTransport}. */
export interface UndiciTransportOptions {
  /** Connect to loopback, private and other non-public addresses too (default `false`). */
  allowPrivate?: boolean;
  /**
   * Where host names are resolved when connecting (default the operating system's resolver,
   * `dns.lookup`). Tests inject one that answers a private address for a public-looking name.
   */
  resolver?: HostResolver;
  /** Overrides of the deadlines, in ms (tests). */
  timeoutMs?: number;
  connectTimeoutMs?: number;
}

/** A WebhookTransport that can also release its connections. */
export interface ClosableWebhookTransport extends WebhookTransport {
  /** Closes pooled connections (waits for requests in flight). */
  close(): Promise<void>;
}

/** Raised inside the connector when a target is refused; its message is safe to log and show. */
class RefusedTarget extends Error {
  readonly code = 'PARLEY_REFUSED_TARGET';
}

/** The refusal of a connection to a non-public address of `kind` (shared with the MCP client, replies/mcp). */
export function refusal(kind: string): RefusedTarget {
  return new RefusedTarget(
    `Refused target: the host resolves to a non-public (${kind}) address; private webhook URLs are not allowed.`,
  );
}

/**
 * A `net.connect` lookup that resolves like `dns.lookup` (or through `resolver`) and fails when
 * any address of the name is not public, so no socket is ever opened to one. Refusing the whole
 * name rather than picking a public address keeps a rebinding name from winning by racing.
 */
export function guardedLookup(resolver: HostResolver | undefined): LookupFunction {
  return (hostname, options, callback) => {
    const done = (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const kind = addresses.map((entry) => nonPublicAddressKind(entry.address)).find((found) => found !== null);
      if (kind) return callback(refusal(kind), '', 0);
      if (addresses.length === 0)
        return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    if (resolver) {
      resolver.resolve(hostname).then(
        (found) =>
          done(
            null,
            found.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 })),
          ),
        (error: NodeJS.ErrnoException) => done(error, []),
      );
    } else {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => done(error, addresses ?? []));
    }
  };
}

/** `Retry-After` (delay-seconds or an HTTP-date, RFC 9110 §10.2.3) in ms from `nowMs`, capped at 24 h; `null` when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return null;
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return null;
    ms = Math.max(0, date - nowMs);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Words for a failure without a response, never quoting the URL, headers or payload. */
export function describeFailure(
  error: unknown,
  timedOut: boolean,
  timeoutMs: number,
  connectTimeoutMs: number,
): string {
  if (timedOut) return `Timed out: no complete response within ${timeoutMs / 1000} s.`;
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    if (current instanceof RefusedTarget) return current.message;
    const code = (current as NodeJS.ErrnoException).code;
    switch (code) {
      case 'UND_ERR_CONNECT_TIMEOUT':
        return `Connect timed out: no connection within ${connectTimeoutMs / 1000} s.`;
      case 'ECONNREFUSED':
        return 'Connection refused.';
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return 'The host name did not resolve.';
      case 'ECONNRESET':
      case 'UND_ERR_SOCKET':
      case 'EPIPE':
        return 'The connection was closed before a complete response.';
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return 'The host is unreachable.';
      case 'ERR_TLS_CERT_ALTNAME_INVALID':
      case 'CERT_HAS_EXPIRED':
      case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
      case 'SELF_SIGNED_CERT_IN_CHAIN':
        return `TLS certificate not accepted (${code}).`;
      default:
        if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) {
          if (current.cause === undefined) return `Request failed (${code}).`;
        }
    }
    current = current.cause;
  }
  return 'Request failed.';
}

/** Reads at most `limit` bytes of `body`, then drops (a bounded amount of) the rest. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  for await (const chunk of body) {
    if (kept < limit) {
      const part = chunk.subarray(0, limit - kept);
      chunks.push(part);
      kept += part.length;
      dropped += chunk.length - part.length;
    } else dropped += chunk.length;
    if (dropped > DISCARD_LIMIT_BYTES) {
      body.destroy();
      break;
    }
  }
  // A cut inside a multi-byte character decodes to U+FFFD rather than failing; U+0000 is valid
  // UTF-8 but not storable, so it becomes U+FFFD too (docs/errors.md#strings).
  return storableText(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The WebhookTransport Parley uses by default. Each `send` POSTs `request.body` with its headers
 * and resolves — never rejects — with what happened. Unless `allowPrivate`, a host that is or
 * resolves to a loopback, private, link-local, CGNAT, unspecified, metadata or reserved address
 * (classified like registration, `nonPublicAddressKind`) is refused with `status: null` before any
 * connection: IP-literal hosts are checked up front, names inside the connection's own DNS lookup,
 * so a name that resolves elsewhere at delivery time than at registration is caught too.
 */
export function undiciTransport(options: UndiciTransportOptions = {}): ClosableWebhookTransport {
  const allowPrivate = options.allowPrivate ?? false;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? WEBHOOK_CONNECT_TIMEOUT_MS;
  const agent = new Agent({
    connect: {
      timeout: connectTimeoutMs,
      ...(allowPrivate
        ? options.resolver
          ? { lookup: resolverLookup(options.resolver) }
          : {}
        : { lookup: guardedLookup(options.resolver) }),
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // Node's Happy Eyeballs would pass `all: true` lookups; the guarded lookup handles both forms.
  });
  return {
    async send(webhook: WebhookRequest, signal?: AbortSignal): Promise<WebhookResponse> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const failed = (error: string): WebhookResponse => ({
        status: null,
        responseBody: null,
        error,
        durationMs: elapsed(),
        retryAfterMs: null,
      });
      const url = new URL(webhook.url);
      if (!allowPrivate) {
        const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
        if (isIP(host) !== 0) {
          const kind = nonPublicAddressKind(host);
          if (kind) return failed(refusal(kind).message);
        }
      }
      // One controller and one timer per attempt: cheaper than AbortSignal.timeout + AbortSignal.any.
      const controller = new AbortController();
      let timedOut = false;
      const deadline = webhook.timeoutMs ?? timeoutMs;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, deadline);
      const stop = () => controller.abort();
      signal?.addEventListener('abort', stop, { once: true });
      try {
        const response = await request(url, {
          method: 'POST',
          headers: webhook.headers,
          body: webhook.body,
          dispatcher: agent,
          signal: controller.signal,
          ...(webhook.timeoutMs !== undefined && { headersTimeout: deadline, bodyTimeout: deadline }),
        });
        const responseBody = await readCapped(response.body, webhook.maxResponseBytes ?? WEBHOOK_RESPONSE_BODY_BYTES);
        const status = response.statusCode;
        const retryAfterMs =
          status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after'], Date.now()) : null;
        return { status, responseBody, error: null, durationMs: elapsed(), retryAfterMs };
      } catch (error) {
        return failed(
          signal?.aborted && !timedOut
            ? 'Aborted: the worker stopped.'
            : describeFailure(error, timedOut, deadline, connectTimeoutMs),
        );
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
      }
    },
    close: () => agent.close(),
  };
}

/** A plain lookup through `resolver` (private targets allowed). */
export function resolverLookup(resolver: HostResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolver.resolve(hostname).then(
      (found) => {
        const addresses = found.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
