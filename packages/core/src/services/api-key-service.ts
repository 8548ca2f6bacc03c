/** @module API keys: issue, authenticate (RFC 6750 bearer tokens) with an in-process cache, list and revoke. */
import { hash as digest } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { inject, injectable } from '../di.js';
import type { ApiKeyStore, ApiKeyUpsert } from '../ports/api-keys.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import { TOKENS } from '../tokens.js';
import { apiKeyChecksumFails, generateApiKey } from './api-key-format.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { ApiKeyRecord, Plan, Principal, Scope } from '../types.js';

/** SHA-256 of a raw key, lowercase hex: the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return digest('sha256', key, 'hex');
}

/**
 * How long an authenticated key's principal is reused without asking the store, in ms: the bound
 * on a revocation made elsewhere (another instance, `parley keys revoke`) reaching this process
 * (docs/authentication.md#revocation).
 */
export const API_KEY_CACHE_TTL_MS = 5_000;

/** How many principals the cache holds at most; past it the oldest entry makes room. */
export const API_KEY_CACHE_SIZE = 10_000;

/** A cached principal and when its lookup began, on the service's clock and on the monotonic one. */
interface CachedPrincipal {
  principal: Principal;
  at: number;
  monotonicAt: number;
}

/**
 * Principals of known keys by key hash, each reused for at most {@link API_KEY_CACHE_TTL_MS}
 * from the moment its store lookup *began* — so a revocation the store applied after that lookup
 * read the key is seen at most that long later. An entry expires when either the service's clock
 * (tests move it) or the monotonic clock (which no wall-clock jump or frozen test clock can hold
 * back) says so; a clock moved backwards expires it too. Unknown keys are never cached: a key
 * created elsewhere works at once. Every same-process change (issue, upsert, revoke) empties the
 * cache and bumps {@link generation}, and a lookup begun before a change stores nothing.
 */
class PrincipalCache {
  private readonly entries = new Map<string, CachedPrincipal>();
  /** Bumped by every change: a lookup begun under an older generation must not be cached. */
  generation = 0;

  constructor(private readonly clock: Clock) {}

  get(hash: string): Principal | undefined {
    const entry = this.entries.get(hash);
    if (entry === undefined) return undefined;
    const age = this.clock.now() - entry.at;
    if (age >= 0 && age < API_KEY_CACHE_TTL_MS && performance.now() - entry.monotonicAt < API_KEY_CACHE_TTL_MS)
      return entry.principal;
    this.entries.delete(hash);
    return undefined;
  }

  /** When a lookup begins: pass the result to {@link set} once it is known. */
  begin(): { generation: number; at: number; monotonicAt: number } {
    return { generation: this.generation, at: this.clock.now(), monotonicAt: performance.now() };
  }

  set(hash: string, principal: Principal, lookup: ReturnType<PrincipalCache['begin']>): void {
    if (lookup.generation !== this.generation) return;
    // Oldest first (Map insertion order): a full cache drops its oldest entry.
    if (this.entries.size >= API_KEY_CACHE_SIZE) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { principal, at: lookup.at, monotonicAt: lookup.monotonicAt });
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

/** The principal of a stored key, frozen (scopes too): one object is shared by every request the cache serves. */
function principalOf(record: ApiKeyRecord): Principal {
  const { hash: _hash, createdAt: _createdAt, scopes, ...rest } = record;
  return Object.freeze({ ...rest, scopes: Object.freeze([...scopes]) });
}

/** What to issue a key for. `scopes` defaults to `['*']`. */
export interface ApiKeyGrant {
  workspaceId: string;
  plan: Plan;
  scopes?: ReadonlyArray<Scope | '*'>;
  limitPerHour?: number;
}

/** True when `principal` holds `scope` (directly or through `*`). */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes('*') || principal.scopes.includes(scope);
}

/**
 * API keys, stored as SHA-256 hashes only (docs/authentication.md). Authentication caches known
 * keys' principals in this process for up to {@link API_KEY_CACHE_TTL_MS}
 * (docs/authentication.md#revocation).
 */
@injectable()
export class ApiKeyService {
  private readonly cache: PrincipalCache;

  constructor(
    @inject(TOKENS.apiKeys) private readonly store: ApiKeyStore,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
  ) {
    this.cache = new PrincipalCache(clock);
  }

  /**
   * The principal of a raw key (frozen: shared by the requests the cache serves), or `null` for an
   * unknown one, or — without asking the store — for a key in the generated format whose checksum
   * fails ({@link apiKeyChecksumFails}). A known key's principal is reused for up to
   * {@link API_KEY_CACHE_TTL_MS} without a store lookup, so a key revoked by another process keeps
   * working here at most that long; one revoked through this service stops at once.
   * @throws ParleyError `service_unavailable` when the store cannot answer (never cached).
   */
  async authenticate(key: string): Promise<Principal | null> {
    // A generated key whose checksum fails is a typo: refused without a lookup (see api-key-format.ts).
    if (apiKeyChecksumFails(key)) return null;
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const lookup = this.cache.begin();
    // The store is asked for the record under this exact hash, so a record found *is* the match:
    // no second comparison is needed, in constant time or otherwise. What a lookup's timing could
    // reveal is how much of a hash some stored hash shares, and knowing a stored hash does not
    // yield a key that produces it (SHA-256 preimage resistance; a generated key has ~178 random bits).
    const record = await this.store.findByHash(hash);
    if (!record) return null;
    const principal = principalOf(record);
    this.cache.set(hash, principal, lookup);
    return principal;
  }

  /**
   * Stores a key. Without `key`, a new one is generated ({@link generateApiKey}). Returns the raw
   * key (shown once; only its hash is kept) and the stored record.
   * @throws ParleyError `validation_failed` for a given key in the generated format whose checksum fails.
   */
  async issue(grant: ApiKeyGrant, key: string = generateApiKey()): Promise<{ key: string; record: ApiKeyRecord }> {
    if (apiKeyChecksumFails(key)) {
      // It could never authenticate: say so now rather than store a dead key.
      throw new ParleyError(ErrorCode.validationFailed, 'A prl_ key of 40 characters must carry a valid checksum.', {
        issues: [{ path: 'key', message: 'Checksum does not match.' }],
      });
    }
    const record = this.record(grant, key);
    await this.store.insert(record);
    // A given key may replace a stored record with the same hash: no principal of it may outlive that.
    this.cache.clear();
    return { key, record };
  }

  /**
   * Stores a key from configuration by its hash (see {@link ApiKeyStore.upsert}), and forgets every
   * cached principal, so a grant changed in this process applies to the next request.
   * @throws ParleyError `service_unavailable` when the store cannot answer.
   */
  async upsert(record: ApiKeyRecord): Promise<ApiKeyUpsert> {
    try {
      return await this.store.upsert(record);
    } finally {
      this.cache.clear();
    }
  }

  /**
   * Stores a key given in configuration (`API_KEYS`) by its hash, with `grant`: created when new,
   * its grant updated in place when it changed (the stored key id and creation time stay), left
   * alone otherwise. Restarts and instances starting together store each key once.
   * @throws ParleyError `service_unavailable` when the store cannot answer.
   */
  configure(grant: ApiKeyGrant, key: string): Promise<ApiKeyUpsert> {
    return this.upsert(this.record(grant, key));
  }

  /** Every key (hashes only), or those of one workspace; oldest first. */
  list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    return this.store.list(workspaceId);
  }

  /**
   * Deletes a key; from the moment this resolves, it no longer authenticates through this service
   * (other processes stop accepting it within {@link API_KEY_CACHE_TTL_MS}). `false` when no key has this id.
   */
  async revoke(keyId: string): Promise<boolean> {
    try {
      return await this.store.revoke(keyId);
    } finally {
      // Also after a failure: the store may have applied the revoke before the reply was lost.
      this.cache.clear();
    }
  }

  private record(grant: ApiKeyGrant, key: string): ApiKeyRecord {
    return {
      keyId: this.ids.next('key'),
      workspaceId: grant.workspaceId,
      plan: grant.plan,
      scopes: grant.scopes ?? ['*'],
      ...(grant.limitPerHour === undefined ? {} : { limitPerHour: grant.limitPerHour }),
      hash: hashApiKey(key),
      createdAt: new Date(this.clock.now()).toISOString(),
    };
  }
}
