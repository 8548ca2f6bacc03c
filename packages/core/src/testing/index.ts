/** @module @parley/core/testing: contract suites adapters run against themselves, and test helpers. */
export * from './clock.js';
export * from './host-resolver.js';
export type { ContractAssertion, ContractTestApi } from './contract.js';
export { runStorageContract, type StorageContractOptions, type StorageFactory, type StorageFactoryOptions, type StorageFixture } from './storage-contract/index.js';
export {
  runApiKeyStoreContract,
  type ApiKeyStoreContractOptions,
  type ApiKeyStoreFactory,
  type ApiKeyStoreFixture,
} from './api-key-contract.js';
export * from './rate-limit-contract.js';
export * from './idempotency-contract.js';
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
export * from './receiver.js';
export {
  contractReplyJob,
  runReplyQueueContract,
  type ReplyQueueContractOptions,
  type ReplyQueueFactory,
  type ReplyQueueFixture,
} from './reply-queue-contract.js';
