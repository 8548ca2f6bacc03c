/**
 * @module Idempotency keys on Redis: a claim is one Lua script, atomic across every instance
 * sharing the server; the claim and later the kept response live in one HASH with a TTL.
 */
import { createHash, randomUUID } from 'node:crypto';
import type {
  IdempotencyClaim,
  IdempotencyCompletion,
  IdempotencyRelease,
  IdempotencyRequest,
  IdempotencyStore,
  WorkspaceScope,
} from '@parley/core/adapter';
import { RedisAdapter } from './connection.js';
import { idempotencyKey } from './keys.js';
import { namedScript } from './script.js';

/**
 * A free key is claimed (fields `fingerprint`, `token`; TTL the lease). Otherwise returns
 * `{'mismatch'}` for another fingerprint, `{'in_progress'}` while a token holds it, or
 * `{'replay', status, contentType|nil, body}`.
 */
const CLAIM = namedScript({
  name: 'idempotency_claim',
  keys: ['entry'],
  args: ['fingerprint', 'token', 'leaseMs'],
  lua: `
local stored = redis.call('HMGET', entry, 'fingerprint', 'token', 'status', 'contentType', 'body')
if not stored[1] then
  redis.call('HSET', entry, 'fingerprint', fingerprint, 'token', token)
  redis.call('PEXPIRE', entry, leaseMs)
  return {'claimed'}
end
if stored[1] ~= fingerprint then return {'mismatch'} end
if stored[2] then return {'in_progress'} end
return {'replay', stored[3], stored[4], stored[5]}
`,
});

/**
 * Only while `token` holds the key: drops the token, stores the response, TTL `ttlMs`. Returns 1 or 0.
 */
const COMPLETE = namedScript({
  name: 'idempotency_complete',
  keys: ['entry'],
  args: ['token', 'status', 'body', 'ttlMs', 'contentType'],
  lua: `
if redis.call('HGET', entry, 'token') ~= token then return 0 end
redis.call('HDEL', entry, 'token')
redis.call('HSET', entry, 'status', status, 'body', body)
if contentType ~= '' then redis.call('HSET', entry, 'contentType', contentType) end
redis.call('PEXPIRE', entry, ttlMs)
return 1
`,
});

/** Only while `token` holds the key: deletes it. Returns 1 or 0. */
const RELEASE = namedScript({
  name: 'idempotency_release',
  keys: ['entry'],
  args: ['token'],
  lua: `
if redis.call('HGET', entry, 'token') ~= token then return 0 end
redis.call('DEL', entry)
return 1
`,
});

/**
 * {@link IdempotencyStore} on Redis: each method is one Lua script (one round trip), so at most
 * one of any number of concurrent requests, on any instance, claims a workspace's key. TTLs are
 * Redis's own (`PEXPIRE`), so nothing needs sweeping. Options as for `RedisStorage`.
 */
export class RedisIdempotencyStore extends RedisAdapter implements IdempotencyStore {
  /** @throws ParleyError `service_unavailable` when Redis cannot be reached or refuses the write. */
  async claim(
    { workspaceId }: WorkspaceScope,
    { key, fingerprint, leaseMs }: IdempotencyRequest,
  ): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const reply = (await this.runner.script(CLAIM, {
      keys: { entry: this.key(workspaceId, key) },
      args: { fingerprint, token, leaseMs: Math.max(1, Math.ceil(leaseMs)) },
    })) as Array<string | null>;
    const [outcome, status, contentType, body] = reply;
    if (outcome === 'claimed') return { outcome, token };
    if (outcome === 'mismatch' || outcome === 'in_progress') return { outcome };
    return {
      outcome: 'replay',
      response: { status: Number(status), contentType: contentType ?? null, body: body ?? '' },
    };
  }

  /** @throws ParleyError `service_unavailable` when Redis cannot be reached or refuses the write. */
  async complete(
    { workspaceId }: WorkspaceScope,
    { key, token, response, ttlMs }: IdempotencyCompletion,
  ): Promise<boolean> {
    // An empty content type means none: a real one is never empty.
    const args = {
      token,
      status: response.status,
      body: response.body,
      ttlMs: Math.max(1, Math.ceil(ttlMs)),
      contentType: response.contentType ?? '',
    };
    return Number(await this.runner.script(COMPLETE, { keys: { entry: this.key(workspaceId, key) }, args })) === 1;
  }

  /** @throws ParleyError `service_unavailable` when Redis cannot be reached. */
  async release({ workspaceId }: WorkspaceScope, { key, token }: IdempotencyRelease): Promise<boolean> {
    return (
      Number(await this.runner.script(RELEASE, { keys: { entry: this.key(workspaceId, key) }, args: { token } })) === 1
    );
  }

  private key(workspaceId: string, key: string): string {
    return idempotencyKey(this.runner.prefix, workspaceId, createHash('sha256').update(key, 'utf8').digest('hex'));
  }
}
