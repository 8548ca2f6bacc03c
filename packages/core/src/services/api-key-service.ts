/** @module API keys: issue, authenticate (RFC 6750 bearer tokens), list and revoke. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { inject, injectable } from '../di.js';
import type { ApiKeyStore } from '../ports/api-keys.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import { TOKENS } from '../tokens.js';
import { apiKeyChecksumFails, generateApiKey } from './api-key-format.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { ApiKeyRecord, Plan, Principal, Scope } from '../types.js';

/** SHA-256 of a raw key, lowercase hex: the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
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

/** API keys, stored as SHA-256 hashes only (docs/authentication.md). */
@injectable()
export class ApiKeyService {
  constructor(
    @inject(TOKENS.apiKeys) private readonly store: ApiKeyStore,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
  ) {}

  /**
   * The principal of a raw key, or `null` for an unknown one, or — without asking the store — for
   * a key in the generated format whose checksum fails ({@link apiKeyChecksumFails}). The stored hash is compared with
   * `timingSafeEqual`, so the comparison takes the same time wherever the hashes differ.
   */
  async authenticate(key: string): Promise<Principal | null> {
    // A generated key whose checksum fails is a typo: refused without a lookup (see api-key-format.ts).
    if (apiKeyChecksumFails(key)) return null;
    const hash = hashApiKey(key);
    const record = await this.store.findByHash(hash);
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) return null;
    const { hash: _hash, createdAt: _createdAt, ...principal } = record;
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
      throw new ParleyError(ErrorCode.validationFailed, 'A prl_ key of 40 characters must carry a valid checksum.', { issues: [{ path: 'key', message: 'Checksum does not match.' }] });
    }
    const record: ApiKeyRecord = {
      keyId: this.ids.next('key'),
      workspaceId: grant.workspaceId,
      plan: grant.plan,
      scopes: grant.scopes ?? ['*'],
      ...(grant.limitPerHour === undefined ? {} : { limitPerHour: grant.limitPerHour }),
      hash: hashApiKey(key),
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    await this.store.insert(record);
    return { key, record };
  }

  /** Every key (hashes only), or those of one workspace; oldest first. */
  list(workspaceId?: string): Promise<ApiKeyRecord[]> {
    return this.store.list(workspaceId);
  }

  /** `false` when no key has this id. */
  revoke(keyId: string): Promise<boolean> {
    return this.store.revoke(keyId);
  }
}
