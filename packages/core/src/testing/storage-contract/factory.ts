/** @module What a storage adapter hands the storage contract: a factory of fresh storages and the settings tests shorten. */
import type { Storage } from '../../ports/storage.js';

/** A storage under test together with what removes its data afterwards. */
export interface StorageFixture {
  storage: Storage;
  /** Called after each test, also when it failed (e.g. delete the test's Redis key prefix). */
  cleanup?: () => void | Promise<void>;
}

/**
 * Adapter settings some tests need shortened; a factory passes each one given to its adapter
 * (absent: the adapter's default).
 */
export interface StorageFactoryOptions {
  /** How long events (and deliveries) are kept, in ms: the retention tests use a few hundred. */
  eventRetentionMs?: number;
  /** How long an outbox batch is held by its taker, in ms: the redelivery tests use a few hundred. */
  outboxLeaseMs?: number;
}

/**
 * Returns a fresh, empty storage for one test, or a {@link StorageFixture}, honouring `options`.
 * Called once per test, so an adapter over a shared server gives each call its own key prefix
 * and flushes it in `cleanup`. The outbox spans workspaces, so a fresh storage must not see the
 * outbox of another call's storage.
 */
export type StorageFactory = (
  options: StorageFactoryOptions,
) => Storage | StorageFixture | Promise<Storage | StorageFixture>;
