/** @module Idempotency keys in this process's memory: each claim is one synchronous section. */
import { randomUUID } from 'node:crypto';
import type {
  IdempotencyClaim,
  IdempotencyCompletion,
  IdempotencyRelease,
  IdempotencyRequest,
  IdempotencyStore,
  IdempotentResponse,
  WorkspaceScope,
} from '@parley/core/adapter';

interface Entry {
  fingerprint: string;
  /** Set while claimed; `undefined` once completed. */
  token?: string;
  response?: IdempotentResponse;
  /** When the lease or the kept response runs out (ms since the epoch, `Date.now()`). */
  expiresAt: number;
}

/** Options of a {@link MemoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /**
   * The most keys held per workspace; a new one past it drops that workspace's oldest.
   * Default {@link MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE}.
   */
  maxKeysPerWorkspace?: number;
}

/**
 * How many `Idempotency-Key`s a {@link MemoryIdempotencyStore} holds per workspace by default:
 * ten hours of a Pro workspace sending every request with a new key, and a bound on what one
 * workspace's distinct keys can make this process hold.
 */
export const MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE = 10_000;

/**
 * {@link IdempotencyStore} in memory: per workspace, a `Map` from key to the claim or kept
 * response. Nothing in a method awaits, so each runs within one turn of the event loop and is
 * atomic against every other caller in this process — and only this process: use the Redis store
 * when several instances serve one API. Expired entries are dropped when next touched and swept
 * every `max(1 000, size)` claims. Each workspace holds at most `maxKeysPerWorkspace` keys: a
 * claim past it drops the workspace's oldest key (claimed first), even before its time is up, so
 * what distinct keys can make this process hold is bounded, and one workspace's keys never push
 * out another's (docs/idempotency.md).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  /** Per workspace, its keys in the order they were claimed (a `Map` keeps insertion order). */
  private readonly workspaces = new Map<string, Map<string, Entry>>();
  private readonly maxKeysPerWorkspace: number;
  private entryCount = 0;
  private claimsSinceSweep = 0;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.maxKeysPerWorkspace = options.maxKeysPerWorkspace ?? MEMORY_IDEMPOTENCY_KEYS_PER_WORKSPACE;
    if (!Number.isSafeInteger(this.maxKeysPerWorkspace) || this.maxKeysPerWorkspace < 1) {
      throw new RangeError(`maxKeysPerWorkspace must be an integer ≥ 1, got ${options.maxKeysPerWorkspace}`);
    }
  }

  async claim(
    { workspaceId }: WorkspaceScope,
    { key, fingerprint, leaseMs }: IdempotencyRequest,
  ): Promise<IdempotencyClaim> {
    const now = Date.now();
    if (++this.claimsSinceSweep >= Math.max(1000, this.entryCount)) this.sweep(now);
    const entry = this.live(workspaceId, key, now);
    if (!entry) {
      const token = randomUUID();
      let keys = this.workspaces.get(workspaceId);
      if (keys === undefined) this.workspaces.set(workspaceId, (keys = new Map()));
      if (keys.size >= this.maxKeysPerWorkspace) {
        keys.delete(keys.keys().next().value!);
        this.entryCount -= 1;
      }
      keys.set(key, { fingerprint, token, expiresAt: now + leaseMs });
      this.entryCount += 1;
      return { outcome: 'claimed', token };
    }
    if (entry.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (entry.response === undefined) return { outcome: 'in_progress' };
    return { outcome: 'replay', response: { ...entry.response } };
  }

  async complete(
    { workspaceId }: WorkspaceScope,
    { key, token, response, ttlMs }: IdempotencyCompletion,
  ): Promise<boolean> {
    const now = Date.now();
    const entry = this.live(workspaceId, key, now);
    if (!entry || entry.token !== token) return false;
    entry.token = undefined;
    entry.response = { ...response };
    entry.expiresAt = now + ttlMs;
    return true;
  }

  async release({ workspaceId }: WorkspaceScope, { key, token }: IdempotencyRelease): Promise<boolean> {
    const entry = this.live(workspaceId, key, Date.now());
    if (!entry || entry.token !== token) return false;
    this.drop(workspaceId, key);
    return true;
  }

  /** Entries held, expired ones included until swept (for tests). */
  get size(): number {
    return this.entryCount;
  }

  /** Drops every entry expired at `now`. */
  sweep(now = Date.now()): void {
    this.claimsSinceSweep = 0;
    for (const [workspaceId, keys] of this.workspaces) {
      for (const [key, entry] of keys) if (entry.expiresAt <= now) this.drop(workspaceId, key);
    }
  }

  private drop(workspaceId: string, key: string): void {
    const keys = this.workspaces.get(workspaceId);
    if (!keys?.delete(key)) return;
    this.entryCount -= 1;
    if (keys.size === 0) this.workspaces.delete(workspaceId);
  }

  private live(workspaceId: string, key: string, now: number): Entry | undefined {
    const entry = this.workspaces.get(workspaceId)?.get(key);
    if (entry && entry.expiresAt <= now) {
      this.drop(workspaceId, key);
      return undefined;
    }
    return entry;
  }
}
