/** @module tsyringe injection tokens: every constructor parameter of a service names one. */
export const TOKENS = Object.freeze({
  storage: Symbol.for('parley.Storage'),
  apiKeys: Symbol.for('parley.ApiKeyStore'),
  deliveryQueue: Symbol.for('parley.DeliveryQueue'),
  webhookTransport: Symbol.for('parley.WebhookTransport'),
  deliveryOptions: Symbol.for('parley.DeliveryOptions'),
  clock: Symbol.for('parley.Clock'),
  ids: Symbol.for('parley.IdGenerator'),
  rateLimits: Symbol.for('parley.RateLimitStore'),
  rateLimiterOptions: Symbol.for('parley.RateLimiterOptions'),
  webhookTargets: Symbol.for('parley.WebhookTargetPolicy'),
  agentSchemas: Symbol.for('parley.AgentSchemas'),
  models: Symbol.for('parley.LanguageModels'),
  replyQueue: Symbol.for('parley.ReplyQueue'),
  conversationFeed: Symbol.for('parley.ConversationFeed'),
  replyOptions: Symbol.for('parley.ReplyOptions'),
});
