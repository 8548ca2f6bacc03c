/** @module Wires the services to the adapters in a container of their own. */
import { container as rootContainer, type DependencyContainer } from './di.js';
import type { ApiKeyStore } from './ports/api-keys.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { EventPublisher } from './ports/events.js';
import { createUlidGenerator, type IdGenerator } from './ports/ids.js';
import type { Storage } from './ports/storage.js';
import { AgentService } from './services/agent-service.js';
import { ApiKeyService } from './services/api-key-service.js';
import { ConversationService } from './services/conversation-service.js';
import { PlantService } from './services/plant-service.js';
import { WebhookService } from './services/webhook-service.js';
import { TOKENS } from './tokens.js';

/** The adapters a core runs on. `clock` defaults to the system clock, `ids` to prefixed ULIDs. */
export interface CoreOptions {
  storage: Storage;
  apiKeys: ApiKeyStore;
  events: EventPublisher;
  clock?: Clock;
  ids?: IdGenerator;
}

/** Parley's services over one set of adapters. */
export interface Core {
  agents: AgentService;
  conversations: ConversationService;
  webhooks: WebhookService;
  plants: PlantService;
  apiKeys: ApiKeyService;
  storage: Storage;
  clock: Clock;
  /** The child container the services were resolved from (register more of your own here). */
  container: DependencyContainer;
}

/**
 * Builds the services in a new child container (the global tsyringe container is never
 * touched, so several cores can live in one process).
 */
export function createCore(options: CoreOptions): Core {
  const clock = options.clock ?? systemClock;
  const container = rootContainer.createChildContainer();
  container.register(TOKENS.storage, { useValue: options.storage });
  container.register(TOKENS.apiKeys, { useValue: options.apiKeys });
  container.register(TOKENS.events, { useValue: options.events });
  container.register(TOKENS.clock, { useValue: clock });
  container.register(TOKENS.ids, { useValue: options.ids ?? createUlidGenerator(() => clock.now()) });
  return {
    agents: container.resolve(AgentService),
    conversations: container.resolve(ConversationService),
    webhooks: container.resolve(WebhookService),
    plants: container.resolve(PlantService),
    apiKeys: container.resolve(ApiKeyService),
    storage: options.storage,
    clock,
    container,
  };
}
