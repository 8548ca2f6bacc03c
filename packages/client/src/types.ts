/** @module The resource, input and query types of the API, named from the generated OpenAPI types. */
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];
type QueryOf<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;

export type Agent = Schemas['Agent'];
export type AgentList = Schemas['AgentList'];
/**
 * A model name: the spec's three (suggested by editors) or any name the server configures in
 * `MODELS` (its `/openapi.json` lists them), which a document generated once cannot know.
 */
export type AgentModel = NonNullable<Schemas['AgentCreate']['model']> | (string & {});
export type AgentCreate = Omit<Schemas['AgentCreate'], 'model'> & { model: AgentModel };
export type AgentUpdate = Omit<Schemas['AgentUpdate'], 'model'> & { model?: AgentModel };
export type AgentListQuery = QueryOf<'listAgents'>;

export type Conversation = Schemas['Conversation'];
export type ConversationList = Schemas['ConversationList'];
export type ConversationCreate = Schemas['ConversationCreate'];
export type ConversationUpdate = Schemas['ConversationUpdate'];
export type ConversationListQuery = QueryOf<'listConversations'>;

export type Message = Schemas['Message'];
export type MessageCreate = Schemas['MessageCreate'];
export type MessageHistory = Schemas['MessageHistory'];
export type MessageHistoryQuery = QueryOf<'getMessageHistory'>;
export type ReplyRequested = Schemas['ReplyRequested'];

/** Tools (docs/replies-and-streams.md#tools): definitions, calls, the answers a paused reply waits for. */
export type Tool = Schemas['Tool'];
export type ToolCall = Schemas['ToolCall'];
export type PendingToolCall = Schemas['PendingToolCall'];
export type AgentWithToolsSecret = Schemas['AgentWithToolsSecret'];
export type ToolResults = Schemas['ToolResults'];
export type ToolResultsAccepted = Schemas['ToolResultsAccepted'];
export type ReplyFailed = Schemas['ReplyFailed'];
export type ReplyRequiresAction = Schemas['ReplyRequiresAction'];
/** Stopping a reply (docs/replies-and-streams.md#stopping-a-reply). */
export type ReplyCancelled = Schemas['ReplyCancelled'];
export type RepliesCancelled = Schemas['RepliesCancelled'];
export type UsageReport = Schemas['UsageReport'];
export type UsageQuery = QueryOf<'getUsage'>;

export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated'];
export type WebhookEndpointList = Schemas['WebhookEndpointList'];
export type WebhookCreate = Schemas['WebhookCreate'];
export type WebhookUpdate = Schemas['WebhookUpdate'];
export type WebhookListQuery = QueryOf<'listWebhooks'>;

export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type DeliveryList = Schemas['DeliveryList'];
export type DeliveryListQuery = QueryOf<'listWebhookDeliveries'>;
export type RecoverRequest = Schemas['RecoverRequest'];
export type RecoverResult = Schemas['RecoverResult'];
export type RetryResult = Schemas['RetryResult'];
export type RotateSecretRequest = Schemas['RotateSecretRequest'];
export type RotateSecretResult = Schemas['RotateSecretResult'];
export type WebhookTestRequest = Schemas['WebhookTestRequest'];

export type Event = Schemas['Event'];
export type EventList = Schemas['EventList'];
export type EventListQuery = QueryOf<'listEvents'>;

/** A plant of the sandbox as plants-openapi.json names it; answers also carry its `id`. */
export type Plant = Schemas['Plant'];
export type NewPlant = Schemas['NewPlant'];
export type PlantListQuery = QueryOf<'listPlants'>;

/** What the calling key grants (`GET /api/key`). */
export type CallingKey = Schemas['CallingKey'];

export type DeleteResult = Schemas['DeleteResult'];
export type Health = Schemas['Health'];
