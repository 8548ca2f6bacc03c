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
import { DEFAULT_TIMEOUT_MS, RedisRunner, closeClient, connect, type RedisAdapterOptions, type RedisClient } from './connection.js';
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
export class RedisStorage implements Storage {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly messages: MessageStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly plants: PlantStore;
  /** The ioredis client in use. */
  readonly client: RedisClient;
  private readonly runner: RedisRunner;
  private readonly owned: boolean;

  constructor(options: RedisAdapterOptions) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const { client, owned } = connect(options, timeoutMs);
    this.client = client;
    this.owned = owned;
    this.runner = new RedisRunner(client, timeoutMs, options.prefix);
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

  /** Closes the client if this adapter created it; a client passed in stays open. */
  close(): Promise<void> {
    return closeClient(this.client, this.owned);
  }
}
