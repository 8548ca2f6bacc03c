/** @module The memory storage adapter against the storage port's contract. */
import { runStorageContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './memory-storage.js';

runStorageContract({ describe, it, expect }, (options) => new MemoryStorage(options));
