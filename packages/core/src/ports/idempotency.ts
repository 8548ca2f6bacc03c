/** @module The idempotency store port: claim a key atomically, then keep or drop the response. */
import type { WorkspaceScope } from './scope.js';

/** A response kept for replay: status, `Content-Type` and the body as sent. */
export interface IdempotentResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/** The outcome of {@link IdempotencyStore.claim}. */
export type IdempotencyClaim =
  /** The key was free (or its lease expired): the caller runs the request, then completes or releases with `token`. */
  | { outcome: 'claimed'; token: string }
  /** Another request with this key and fingerprint is still being processed. */
  | { outcome: 'in_progress' }
  /** The key was used with another fingerprint (method, path or body). */
  | { outcome: 'mismatch' }
  /** The key's request finished: its response, to send again. */
  | { outcome: 'replay'; response: IdempotentResponse };

/**
 * Where `Idempotency-Key`s live, per workspace.
 *
 * `claim` must check and record in ONE atomic step (a Lua script on Redis, a synchronous section
 * in memory): with any number of concurrent callers, across processes sharing the backend, at
 * most one caller gets `claimed` for a workspace and key until that claim is released or its
 * lease runs out. The fingerprint is compared on every outcome but `claimed`: a different one is
 * `mismatch`, whether the first request is still running or done.
 *
 * A claim lives `leaseMs` unless completed (so a process that dies mid-request blocks retries
 * only that long); `complete` keeps the response `ttlMs` from then; `release` forgets the claim
 * at once, so the next request with the key runs again. `complete` and `release` act only while
 * `token` still owns the key (its lease not expired and not taken over), and report whether they
 * did. Durations are milliseconds. Check an adapter with `runIdempotencyStoreContract` from
 * `@parley/core/testing`.
 */
export interface IdempotencyStore {
  claim(scope: WorkspaceScope, request: IdempotencyRequest): Promise<IdempotencyClaim>;
  complete(scope: WorkspaceScope, completion: IdempotencyCompletion): Promise<boolean>;
  release(scope: WorkspaceScope, release: IdempotencyRelease): Promise<boolean>;
}

/** What {@link IdempotencyStore.claim} records: the key, the request's fingerprint, the lease in ms. */
export interface IdempotencyRequest {
  key: string;
  fingerprint: string;
  leaseMs: number;
}

/** What {@link IdempotencyStore.complete} keeps: the claim's key and token, the response, its TTL in ms. */
export interface IdempotencyCompletion {
  key: string;
  token: string;
  response: IdempotentResponse;
  ttlMs: number;
}

/** The claim {@link IdempotencyStore.release} forgets: its key and token. */
export interface IdempotencyRelease {
  key: string;
  token: string;
}
