/**
 * @module Idempotency keys on Redis: a claim is one Lua script, atomic across every instance
 * sharing the server; the claim and later the kept response live in one HASH with a TTL.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore, IdempotentResponse } from '@parley/core';
import { RedisAdapter } from './connection.js';
import { idempotencyKey } from './keys.js';
import type { LuaScript } from './scripts/script.js';

/**
 * KEYS: the key's HASH. ARGV: fingerprint, token, leaseMs.
 * A free key is claimed (fields `fingerprint`, `token`; TTL the lease). Otherwise returns
 * `{'mismatch'}` for another fingerprint, `{'in_progress'}` while a token holds it, or
 * `{'replay', status, contentType|nil, body}`.
 */
const CLAIM: LuaScript = {
  name: 'idempotency_claim',
  lua: `
local entry = redis.call('HMGET', KEYS[1], 'fingerprint', 'token', 'status', 'contentType', 'body')
if not entry[1] then
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'claimed'}
end
if entry[1] ~= ARGV[1] then return {'mismatch'} end
if entry[2] then return {'in_progress'} end
return {'replay', entry[3], entry[4], entry[5]}
`,
};

/**
 * KEYS: the key's HASH. ARGV: token, status, body, ttlMs, contentType (absent when none).
 * Only while `token` holds the key: drops the token, stores the response, TTL `ttlMs`. Returns 1 or 0.
 */
const COMPLETE: LuaScript = {
  name: 'idempotency_complete',
  lua: `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'token')
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'body', ARGV[3])
if ARGV[5] then redis.call('HSET', KEYS[1], 'contentType', ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`,
};

/** KEYS: the key's HASH. ARGV: token. Only while `token` holds the key: deletes it. Returns 1 or 0. */
const RELEASE: LuaScript = {
  name: 'idempotency_release',
  lua: `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`,
};

/**
 * {@link IdempotencyStore} on Redis: each method is one Lua script (one round trip), so at most
 * one of any number of concurrent requests, on any instance, claims a workspace's key. TTLs are
 * Redis's own (`PEXPIRE`), so nothing needs sweeping. Options as for `RedisStorage`.
 */
export class RedisIdempotencyStore extends RedisAdapter implements IdempotencyStore {
  /** @throws ParleyError `service_unavailable` when Redis cannot be reached or refuses the write. */
  async claim(workspaceId: string, key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const reply = (await this.runner.script(CLAIM, [this.key(workspaceId, key)], [fingerprint, token, Math.max(1, Math.ceil(leaseMs))])) as Array<string | null>;
    const [outcome, status, contentType, body] = reply;
    if (outcome === 'claimed') return { outcome, token };
    if (outcome === 'mismatch' || outcome === 'in_progress') return { outcome };
    return { outcome: 'replay', response: { status: Number(status), contentType: contentType ?? null, body: body ?? '' } };
  }

  /** @throws ParleyError `service_unavailable` when Redis cannot be reached or refuses the write. */
  async complete(workspaceId: string, key: string, token: string, response: IdempotentResponse, ttlMs: number): Promise<boolean> {
    const args = [token, response.status, response.body, Math.max(1, Math.ceil(ttlMs)), ...(response.contentType === null ? [] : [response.contentType])];
    return Number(await this.runner.script(COMPLETE, [this.key(workspaceId, key)], args)) === 1;
  }

  /** @throws ParleyError `service_unavailable` when Redis cannot be reached. */
  async release(workspaceId: string, key: string, token: string): Promise<boolean> {
    return Number(await this.runner.script(RELEASE, [this.key(workspaceId, key)], [token])) === 1;
  }

  private key(workspaceId: string, key: string): string {
    return idempotencyKey(this.runner.prefix, workspaceId, createHash('sha256').update(key, 'utf8').digest('hex'));
  }
}
