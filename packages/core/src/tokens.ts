/** @module tsyringe injection tokens: every constructor parameter of a service names one. */
export const TOKENS = Object.freeze({
  storage: Symbol.for('parley.Storage'),
  apiKeys: Symbol.for('parley.ApiKeyStore'),
  events: Symbol.for('parley.EventPublisher'),
  clock: Symbol.for('parley.Clock'),
  ids: Symbol.for('parley.IdGenerator'),
  rateLimits: Symbol.for('parley.RateLimitStore'),
  rateLimiterOptions: Symbol.for('parley.RateLimiterOptions'),
  webhookTargets: Symbol.for('parley.WebhookTargetPolicy'),
});
