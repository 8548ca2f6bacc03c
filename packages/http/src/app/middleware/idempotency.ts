/** @module `Idempotency-Key` on POST: a retried create is answered from the first response, never run twice. */
import { ErrorCode, ParleyError } from '@parley/core';
import type { IdempotencyStore } from '@parley/core/adapter';
import type { Context, MiddlewareHandler } from 'hono';
import { createHash } from 'node:crypto';
import type { ParleyEnv } from '../env.js';
import { respond, setHeader, textOf } from '../response.js';

/** How long a response is kept for replay: 24 hours, in ms. */
export const IDEMPOTENCY_TTL_MS = 86_400_000;
/**
 * How long a claim holds its key while the request runs, in ms: one minute. A request answers
 * within a few seconds (every Redis call has a deadline under one second); the lease only
 * matters when a process dies mid-request, and then blocks retries (409) for at most this long.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

/** The longest `Idempotency-Key` accepted, in characters. */
const MAX_KEY_LENGTH = 255;
/** 1–255 visible ASCII characters (`%x21-7E`). */
const KEY = new RegExp(`^[\\x21-\\x7e]{1,${MAX_KEY_LENGTH}}$`);

/** Options of {@link idempotency}. */
export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** Default {@link IDEMPOTENCY_TTL_MS}. */
  ttlMs?: number;
  /** Default {@link IDEMPOTENCY_LEASE_MS}. */
  leaseMs?: number;
  /** Told when keeping or dropping a response fails (the response is still sent). */
  onStoreError?: (error: unknown) => void;
}

/**
 * What makes two requests "the same": method, path with query, and the parsed JSON body
 * (re-serialized, so whitespace does not matter but every value and key order does), as SHA-256.
 */
function fingerprint(c: Context<ParleyEnv>, body: unknown): string {
  const url = new URL(c.req.url);
  return createHash('sha256')
    .update(`${c.req.method}\n${url.pathname}${url.search}\n${JSON.stringify(body) ?? ''}`)
    .digest('hex');
}

/**
 * Makes a `POST` idempotent when the client sends `Idempotency-Key` (Stripe's scheme, and the
 * IETF draft "The Idempotency-Key HTTP Header Field"). Runs after authentication (keys are per
 * workspace) and after the body was read (`jsonBody`), so it can fingerprint the request:
 * - a key not of 1–255 visible ASCII characters → 400 `validation_failed`;
 * - first use: the request runs; its response (status, `Content-Type`, body) is kept
 *   {@link IDEMPOTENCY_TTL_MS}, unless it is a 5xx, which is dropped so a retry runs again; an
 *   event stream is sent as it is written and kept once it ended;
 * - the same key with the same method, path and body after that → the kept response again,
 *   with `Idempotent-Replayed: true`, and nothing runs;
 * - the same key with another method, path or body → 422 `idempotency_key_reused`;
 * - the same key while the first request is still running → 409 `idempotency_key_in_use`.
 * Other methods and requests without the header pass through untouched. A store that cannot be
 * reached fails the request with its error (503), before anything runs.
 */
export function idempotency(options: IdempotencyOptions): MiddlewareHandler<ParleyEnv> {
  const { store } = options;
  const ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
  const leaseMs = options.leaseMs ?? IDEMPOTENCY_LEASE_MS;
  const report = options.onStoreError ?? (() => {});
  return async function idempotency(c, next) {
    const key = c.req.header('Idempotency-Key');
    if (c.req.method !== 'POST' || key === undefined) return next();
    if (!KEY.test(key)) {
      // Say which rule failed: the length limit (with the length sent) or the characters.
      const message =
        key.length > MAX_KEY_LENGTH
          ? `Idempotency-Key is ${key.length} characters long; the limit is ${MAX_KEY_LENGTH}.`
          : `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (no spaces or control characters).`;
      throw new ParleyError(ErrorCode.validationFailed, `Validation failed. ${message}`, {
        issues: [{ path: 'Idempotency-Key', message }],
      });
    }
    const { workspaceId } = c.get('principal');
    const body: unknown = (c.req as unknown as { valid(target: 'json'): unknown }).valid('json');
    const claim = await store.claim({ workspaceId }, { key, fingerprint: fingerprint(c, body), leaseMs });
    if (claim.outcome === 'replay') {
      setHeader(c, 'Idempotent-Replayed', 'true');
      const { status, contentType, body: kept } = claim.response;
      // Set rather than returned: this middleware also runs as another middleware's `next`, whose result is dropped.
      c.res = respond(c, kept, status, contentType === null ? undefined : { 'content-type': contentType });
      return;
    }
    if (claim.outcome === 'mismatch') {
      throw new ParleyError(
        ErrorCode.idempotencyKeyReused,
        'This Idempotency-Key was already used for a different request (method, path or body).',
      );
    }
    if (claim.outcome === 'in_progress') {
      throw new ParleyError(
        ErrorCode.idempotencyKeyInUse,
        'A request with this Idempotency-Key is still being processed. Retry later.',
      );
    }
    try {
      await next();
    } catch (error) {
      await store.release({ workspaceId }, { key, token: claim.token }).catch(report);
      throw error;
    }
    const response = c.res;
    if (response.status >= 500) {
      await store.release({ workspaceId }, { key, token: claim.token }).catch(report);
      return;
    }
    const complete = (body: string) => {
      const kept = { status: response.status, contentType: response.headers.get('Content-Type'), body };
      return store.complete({ workspaceId }, { key, token: claim.token, response: kept, ttlMs });
    };
    if (isEventStream(response)) {
      // A stream (`POST /api/chat`) goes out as it is written and is kept whole once it ended, for a
      // repeat to get it again; until then a repeat is 409 `idempotency_key_in_use`.
      const [sent, kept] = response.body!.tee();
      c.res = new Response(sent, response);
      void new Response(kept)
        .text()
        .then(complete, async (error: unknown) => {
          report(error);
          await store.release({ workspaceId }, { key, token: claim.token });
        })
        .catch(report);
      return;
    }
    // The text the response was built from when known: a clone tees its body stream, and the
    // branch the server writes from is never read, which left garbage per kept request.
    const text = textOf(c, response);
    await complete(text === undefined ? await response.clone().text() : (text ?? '')).catch(report);
  };
}

/** A `text/event-stream` response with a body: written as it is produced, never read whole first. */
function isEventStream(response: Response): boolean {
  const type = response.headers.get('Content-Type') ?? '';
  return response.body !== null && type.split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}
