/** @module The memory API key store against the API key port's contract. */
import { runApiKeyStoreContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { MemoryApiKeyStore } from './memory-api-keys.js';

runApiKeyStoreContract({ describe, it, expect }, () => new MemoryApiKeyStore());
