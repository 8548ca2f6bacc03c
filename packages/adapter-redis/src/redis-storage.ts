/**
 * @module The Redis storage adapter: core's {@link Storage} on standalone Redis or Redis Cluster.
 *
 * Guarantees: each port call is atomic (one Lua script or a single command), and one round trip
 * except an agent delete's cascade and the rare `conversations.replace` that changes a
 * conversation's agent or user. Every key of a workspace carries the hash tag `{<workspace>}`,
 * so scripts work on Redis Cluster; a workspace therefore lives on one slot. A call rejects
 * with ParleyError `service_unavailable` within `timeoutMs` when Redis cannot be reached, and
 * works again as soon as Redis is back. Durability is that of the Redis server's persistence
 * settings (RDB/AOF); this adapter acknowledges a write once Redis has applied it in memory.
 */
import type { AgentStore, ConversationStore, MessageStore, PlantStore, Storage, WebhookEndpointStore } from '@parley/core';
import { RedisAdapter, type RedisAdapterOptions } from './connection.js';
import { RedisAgentStore } from './stores/agent-store.js';
import { RedisConversationStore } from './stores/conversation-store.js';
import { RedisMessageStore } from './stores/message-store.js';
import { RedisPlantStore } from './stores/plant-store.js';
import { RedisWebhookEndpointStore } from './stores/webhook-endpoint-store.js';

/**
 * {@link Storage} on Redis. Pass an existing ioredis client (`{ client }`, not closed by
 * {@link close}), a URL (`{ url }`) or Cluster seed nodes (`{ clusterNodes }`), plus an optional
 * key `prefix` (default `parley:`) and call deadline `timeoutMs` (default 1 000 ms).
 *
 * @example
 * ```ts
 * const storage = new RedisStorage({ client: new Redis(process.env.REDIS_URL!), prefix: 'parley:' });
 * ```
 * @throws TypeError from the constructor for a prefix containing `{` or `}`.
 */
export class RedisStorage extends RedisAdapter implements Storage {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly plants: PlantStore;

  constructor(options: RedisAdapterOptions) {
    super(options);
    this.agents = new RedisAgentStore(this.runner);
    this.conversations = new RedisConversationStore(this.runner);
    this.messages = new RedisMessageStore(this.runner);
    this.webhookEndpoints = new RedisWebhookEndpointStore(this.runner);
    this.plants = new RedisPlantStore(this.runner);
  }

  /**
   * Resolves when Redis answers PING (on a Cluster: the node ioredis picks).
   * @throws ParleyError `service_unavailable` when it does not within `timeoutMs`.
   */
  async ping(): Promise<void> {
    await this.runner.run((client) => client.ping());
  }
}
