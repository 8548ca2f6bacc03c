/** @module `runStorageContract`: the storage port's contract, run by every storage adapter. */
import type { Storage } from '../../ports/storage.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from '../contract.js';
import { agentTests } from './agents.js';
import { cascadeTests } from './cascade.js';
import { concurrentChangeTests } from './concurrent-changes.js';
import { conversationLifecycleTests } from './conversation-lifecycle.js';
import { conversationTests } from './conversations.js';
import { deliveryTests } from './deliveries.js';
import { eventLogTests } from './event-log.js';
import { eventRecordingTests } from './event-recording.js';
import { hiddenFieldTests } from './hidden-fields.js';
import { isolationTests } from './isolation.js';
import { messagePageTests } from './message-pages.js';
import { messageTests } from './messages.js';
import { outboxTests } from './outbox.js';
import { usageTests } from './usage.js';
import { webhookEndpointTests } from './webhook-endpoints.js';
import type { StorageFactory, StorageFactoryOptions } from './factory.js';

export type { StorageFactory, StorageFactoryOptions, StorageFixture } from './factory.js';

/** Options of {@link runStorageContract}. */
export interface StorageContractOptions {
  /**
   * Declared opt-outs: a group (`'usage'`) or one test (`'usage: <title>'`). Groups are
   * `agents`, `conversations`, `messages`, `message pages`, `webhook endpoints`, `usage`,
   * `conversation activity`, `conversation delete`, `message get`, `workspace isolation`, `agent delete cascade`, `event recording`, `hidden fields`, `concurrent changes`,
   * `event log`, `event retention`, `outbox`, `outbox leases`, `deliveries`,
   * `deliveries retention`, `ping`.
   */
  skip?: readonly string[];
}

/** Calls the factory and normalizes its result. */
async function openStorage(
  factory: StorageFactory,
  options: StorageFactoryOptions = {},
): Promise<OpenedFixture<Storage>> {
  const made = await factory(options);
  if ('storage' in made) return { subject: made.storage, cleanup: async () => made.cleanup?.() };
  return { subject: made, cleanup: async () => {} };
}

/**
 * Registers the storage port's contract tests (every method of every store of
 * `ports/storage.ts` against its JSDoc) with the caller's test runner. Core does not depend on
 * a runner: pass its API in.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * import { runStorageContract } from '@parley/core/testing';
 * runStorageContract({ describe, it, expect }, () => new MemoryStorage());
 * // Over a shared server, give each test its own key prefix and remove it afterwards:
 * runStorageContract({ describe, it, expect }, () => {
 *   const prefix = `contract:${randomUUID()}:`;
 *   return { storage: new RedisStorage({ client, prefix }), cleanup: () => deleteByPrefix(client, prefix) };
 * });
 * ```
 */
export function runStorageContract(
  t: ContractTestApi,
  factory: StorageFactory,
  options: StorageContractOptions = {},
): void {
  const openWith = (factoryOptions: StorageFactoryOptions) => openStorage(factory, factoryOptions);
  const open = () => openWith({});
  const skip = options.skip ?? [];
  t.describe('storage contract', () => {
    agentTests(t, open, skip);
    conversationTests(t, open, skip);
    conversationLifecycleTests(t, open, skip);
    messageTests(t, open, skip);
    messagePageTests(t, open, skip);
    webhookEndpointTests(t, open, skip);
    usageTests(t, open, skip);
    isolationTests(t, open, skip);
    cascadeTests(t, open, skip);
    eventRecordingTests(t, open, skip);
    hiddenFieldTests(t, open, skip);
    concurrentChangeTests(t, open, skip);
    eventLogTests(t, openWith, skip);
    outboxTests(t, openWith, skip);
    deliveryTests(t, openWith, skip);
    contractGroup(t, 'ping', open, skip, (test) => {
      test('ping resolves while the backend answers', async (storage) => {
        t.expect(await storage.ping()).toBe(undefined);
      });
    });
  });
}
