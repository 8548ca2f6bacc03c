/** @module The webhook transport port: one HTTP POST of a signed payload to a receiver. */

/** A request the delivery worker sends. `body` is the exact bytes that were signed. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** This request's deadline, in ms (a webhook tool's `timeoutMs`); the transport's own when absent. */
  timeoutMs?: number;
  /** How much of the response body to keep, in bytes (tool results); 4 KiB when absent. */
  maxResponseBytes?: number;
}

/**
 * How a request went. `status` is `null` when no response arrived (refused target, DNS or
 * connection failure, timeout), with `error` saying which in words safe to log and show (no
 * secret, no payload). `responseBody` is at most the first 4 KiB of the body, as text
 * without U+0000 (as U+FFFD: it is stored, docs/errors.md#strings).
 * `retryAfterMs` is a `Retry-After` header of a 429 or 503, converted to ms (capped at 24 h).
 */
export interface WebhookResponse {
  status: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  retryAfterMs: number | null;
}

/**
 * Sends webhook requests. The default (`undiciTransport` in `@parley/core`) follows Parley's
 * delivery rules: 15 s total and 5 s connect deadlines, no redirects followed, the response body
 * capped at 4 KiB, and — unless private targets are allowed — no connection to a loopback, private,
 * link-local, CGNAT, unspecified or metadata address, checked on the address actually connected to.
 * Never throws for a receiver's failure: it is reported in the response.
 */
export interface WebhookTransport {
  send(request: WebhookRequest, signal?: AbortSignal): Promise<WebhookResponse>;
}
