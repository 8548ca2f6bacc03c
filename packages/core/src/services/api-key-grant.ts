/** @module The grant of a stored API key (workspace, plan, scopes, limit), as key upserts compare and replace it. */
import type { ApiKeyRecord } from '../types.js';

/**
 * `existing`'s identity (key id, hash, creation time) with `grant`'s workspace, plan, scopes and
 * `limitPerHour` (absent when `grant` has none): what an upsert of an existing key stores.
 */
export function regrantApiKey(existing: ApiKeyRecord, grant: ApiKeyRecord): ApiKeyRecord {
  return {
    keyId: existing.keyId,
    workspaceId: grant.workspaceId,
    plan: grant.plan,
    scopes: [...grant.scopes],
    ...(grant.limitPerHour === undefined ? {} : { limitPerHour: grant.limitPerHour }),
    hash: existing.hash,
    createdAt: existing.createdAt,
  };
}

/** Whether `a` and `b` grant the same: workspace, plan, `limitPerHour` and scopes in order. */
export function sameApiKeyGrant(a: ApiKeyRecord, b: ApiKeyRecord): boolean {
  return (
    a.workspaceId === b.workspaceId &&
    a.plan === b.plan &&
    a.limitPerHour === b.limitPerHour &&
    a.scopes.length === b.scopes.length &&
    a.scopes.every((scope, index) => scope === b.scopes[index])
  );
}
