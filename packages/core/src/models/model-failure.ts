/**
 * @module What a failed model call is reported as (log lines, `reply.failed`): enough to diagnose —
 * connection refused, the HTTP status and the provider's own error message, the host — and never
 * the request (its messages are the conversation's content) or its headers (the API key).
 */
import { storableText } from '../validation.js';

/** A failed model call as a log line or a `reply.failed` may show it. */
export interface ModelFailure {
  /**
   * One line, e.g. `HTTP 401 from api.openai.com: Incorrect API key provided`,
   * `connection refused (ECONNREFUSED) to 127.0.0.1:11434`, or the error's kind, e.g. `EmptyReplyError`.
   */
  description: string;
  /** The provider's HTTP status, when it answered one. */
  status?: number;
  /** `host[:port]` of the provider's URL (never its path or query, which may carry a key). */
  host?: string;
  /** The network error's code (`ECONNREFUSED`, `ENOTFOUND`, …), when the provider was not reached. */
  code?: string;
}

/** The most characters of a provider's error message shown. */
const MAX_MESSAGE = 200;

/** Network error codes in words; others are shown as `could not connect`. */
const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** Errors of Parley's own whose message names no content: shown with it. */
const OWN = new Set(['EmptyReplyError']);

/** The AI SDK's `APICallError` as far as it is read here (duck-typed: its class is in `@ai-sdk/provider`). */
interface ApiCallError {
  name: string;
  message: string;
  url: string;
  statusCode?: number;
  cause?: unknown;
}

function isApiCallError(error: unknown): error is ApiCallError {
  return (
    error instanceof Error && error.name === 'AI_APICallError' && typeof (error as { url?: unknown }).url === 'string'
  );
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** The first `code` along `error`'s cause chain (undici nests the socket's error). */
function networkCode(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
  }
  return undefined;
}

/**
 * `text` on one line, at most {@link MAX_MESSAGE} characters, and storable (it is stored in
 * `reply.failed`): repaired after the cut, which may split a surrogate pair (docs/errors.md#strings).
 */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return storableText(line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line);
}

/**
 * Describes a failed model call without its request: an AI SDK `APICallError` with an HTTP status
 * as the status, host and provider's error message (`HTTP 401 from api.openai.com: Incorrect API
 * key provided`, at most 200 characters of it); one without (the provider was not reached) as the
 * network error and host (`connection refused (ECONNREFUSED) to 127.0.0.1:11434`); anything else
 * by its kind and `statusCode`, never its message (a message of unknown origin may quote the prompt).
 */
export function modelFailure(error: unknown): ModelFailure {
  if (isApiCallError(error)) {
    const host = hostOf(error.url);
    const from = host ?? 'the provider';
    if (typeof error.statusCode === 'number') {
      const message = oneLine(error.message);
      return {
        description: `HTTP ${error.statusCode} from ${from}${message === '' ? '' : `: ${message}`}`,
        status: error.statusCode,
        ...(host && { host }),
      };
    }
    const code = networkCode(error.cause);
    const what =
      code === undefined
        ? 'could not connect'
        : `${NETWORK[code] ?? (/CERT|TLS|SSL/.test(code) ? 'TLS failed' : 'could not connect')} (${code})`;
    return { description: `${what} to ${from}`, ...(host && { host }), ...(code && { code }) };
  }
  const name = error instanceof Error ? error.name : typeof error;
  if (error instanceof Error && OWN.has(name)) return { description: `${name}: ${error.message}` };
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? { description: `${name} (HTTP ${status})`, status } : { description: name };
}

/** {@link modelFailure}'s description. */
export function describeModelError(error: unknown): string {
  return modelFailure(error).description;
}
