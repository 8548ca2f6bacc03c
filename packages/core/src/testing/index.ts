/** @module @parley/core/testing: contract suites adapters run against themselves, and test helpers. */
export { ManualClock } from './clock.js';
export { StaticHostResolver } from './host-resolver.js';
export type { ContractAssertion, ContractTestApi } from './contract.js';
export {
  runStorageContract,
  type StorageContractOptions,
  type StorageFactory,
  type StorageFactoryOptions,
  type StorageFixture,
} from './storage-contract/index.js';
export {
  runApiKeyStoreContract,
  type ApiKeyStoreContractOptions,
  type ApiKeyStoreFactory,
  type ApiKeyStoreFixture,
} from './api-key-contract.js';
export { runRateLimitStoreContract, type RateLimitStoreContractOptions } from './rate-limit-contract.js';
export {
  runIdempotencyStoreContract,
  type IdempotencyStoreContractOptions,
  type IdempotencyStoreFixture,
} from './idempotency-contract.js';
export { Records } from './storage-contract/fixtures.js';
export { scriptedModel, type ScriptedModel, type ScriptedTurn } from './scripted-model.js';
export {
  contractJob,
  runDeliveryQueueContract,
  type DeliveryQueueContractOptions,
  type DeliveryQueueFactory,
  type DeliveryQueueFactoryOptions,
  type DeliveryQueueFixture,
} from './delivery-queue-contract.js';
export {
  eventually,
  startReceiver,
  verifyHeaders,
  type ReceivedWebhook,
  type Receiver,
  type ReceiverAnswer,
} from './receiver.js';
export {
  CONTRACT_CLAIM,
  CONTRACT_MODEL,
  contractReplyJob,
  runReplyQueueContract,
  type ReplyQueueContractOptions,
  type ReplyQueueFactory,
  type ReplyQueueFixture,
} from './reply-queue-contract.js';
export {
  runConversationFeedContract,
  type ConversationFeedContractOptions,
  type ConversationFeedFactory,
  type ConversationFeedFixture,
} from './conversation-feed-contract.js';
export {
  runAdaptersContract,
  type AdaptersContractOptions,
  type AdaptersFactory,
  type AdaptersFixture,
} from './adapters-contract.js';
