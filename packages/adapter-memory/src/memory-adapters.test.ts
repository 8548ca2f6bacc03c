/** @module memoryAdapters() against core's bundle contract, and its in-process feed against the feed contract. */
import { runAdaptersContract, runConversationFeedContract } from '@parley/core/testing';
import { describe, expect, it } from 'vitest';
import { memoryAdapters } from './index.js';

// Memory can neither lose its connection nor be unreachable: those groups are not registered.
runAdaptersContract({ describe, it, expect }, () => memoryAdapters());

// One process is the whole backend: signals are published on the feed that receives them.
runConversationFeedContract({ describe, it, expect }, () => memoryAdapters().conversationFeed);
