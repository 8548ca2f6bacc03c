/** @module Idempotency keys in this process's memory: each claim is one synchronous section. */
import { randomUUID } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore, IdempotentResponse } from '@parley/core';

interface Entry {
  fingerprint: string;
  /** Set while claimed; `undefined` once completed. */
  token?: string;
  response?: IdempotentResponse;
  /** When the lease or the kept response runs out (ms since the epoch, `Date.now()`). */
  expiresAt: number;
}

/**
 * {@link IdempotencyStore} in memory: a `Map` from workspace and key to the claim or kept
 * response. Nothing in a method awaits, so each runs within one turn of the event loop and is
 * atomic against every other caller in this process — and only this process: use the Redis store
 * when several instances serve one API. Expired entries are dropped when next touched and swept
 * every `max(1 000, size)` claims, so memory holds at most the keys of the last day.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private claimsSinceSweep = 0;

  async claim(workspaceId: string, key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const now = Date.now();
    if (++this.claimsSinceSweep >= Math.max(1000, this.entries.size)) this.sweep(now);
    const id = this.id(workspaceId, key);
    const entry = this.live(id, now);
    if (!entry) {
      const token = randomUUID();
      this.entries.set(id, { fingerprint, token, expiresAt: now + leaseMs });
      return { outcome: 'claimed', token };
    }
    if (entry.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (entry.response === undefined) return { outcome: 'in_progress' };
    return { outcome: 'replay', response: { ...entry.response } };
  }

  async complete(workspaceId: string, key: string, token: string, response: IdempotentResponse, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const entry = this.live(this.id(workspaceId, key), now);
    if (!entry || entry.token !== token) return false;
    entry.token = undefined;
    entry.response = { ...response };
    entry.expiresAt = now + ttlMs;
    return true;
  }

  async release(workspaceId: string, key: string, token: string): Promise<boolean> {
    const id = this.id(workspaceId, key);
    const entry = this.live(id, Date.now());
    if (!entry || entry.token !== token) return false;
    this.entries.delete(id);
    return true;
  }

  /** Entries held, expired ones included until swept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops every entry expired at `now`. */
  sweep(now = Date.now()): void {
    this.claimsSinceSweep = 0;
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
  }

  private id(workspaceId: string, key: string): string {
    // JSON keeps the pair unambiguous whatever characters either holds.
    return JSON.stringify([workspaceId, key]);
  }

  private live(id: string, now: number): Entry | undefined {
    const entry = this.entries.get(id);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(id);
      return undefined;
    }
    return entry;
  }
}
