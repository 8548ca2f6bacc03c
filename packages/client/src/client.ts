/** @module `createParleyClient`: one typed method per operation of Parley's API, over openapi-fetch. */
import createClient, { type Client } from 'openapi-fetch';
import {
  conversationStream,
  type ConversationStreamEvent,
  type ConversationStreamOptions,
} from './conversation-stream.js';
import { ParleyApiError, ParleyNetworkError } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import type * as T from './types.js';

type Schemas = components['schemas'];

/** Options of the create methods (`agents.create`, `conversations.create`, `messages.send`, `webhooks.create`). */
export interface CreateOptions {
  /**
   * Sent as `Idempotency-Key`: retrying with the same key (and the same body) within 24 h returns
   * the first response instead of creating again. Use a fresh random value per logical create.
   */
  idempotencyKey?: string;
}

/** The `Idempotency-Key` header of a create, when one is given. */
function idempotent(options: CreateOptions): { headers?: Record<string, string> } {
  return options.idempotencyKey === undefined ? {} : { headers: { 'Idempotency-Key': options.idempotencyKey } };
}

/** Options of the conditional writes (`update` and `delete` of agents and webhooks, `conversations.update`). */
export interface WriteOptions {
  /**
   * Sent as `If-Match`: the write happens only if the resource's current `ETag` is this one (`*`:
   * any existing resource), else it throws a `precondition_failed` {@link ParleyApiError} (412) and
   * nothing changes. Read the ETag from a response through `raw`, e.g.
   * `(await parley.raw.GET('/api/agents/{id}', …)).response.headers.get('ETag')`.
   */
  ifMatch?: string;
}

/** The `If-Match` header of a conditional write, when one is given. */
function conditional(options: WriteOptions): { headers?: Record<string, string> } {
  return options.ifMatch === undefined ? {} : { headers: { 'If-Match': options.ifMatch } };
}

/** Options of {@link createParleyClient}. */
export interface ParleyClientOptions {
  /**
   * Where Parley is served, with the prefix a host mounted it under: `http://127.0.0.1:3000`,
   * `https://example.com/agents-api`.
   */
  baseUrl: string;
  /** The bearer API key sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** A `fetch` to send requests with (tests, proxies, retries); default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request, e.g. `X-Request-Id`. */
  headers?: Record<string, string>;
}

/** Options of {@link ParleyClient.messages.iterate}. */
export interface IterateOptions {
  /** Messages fetched per request, 1–100; default 100. */
  pageSize?: number;
}

/** What openapi-fetch resolves to: `data` on 2xx, the parsed `error` body otherwise. */
interface FetchResult<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Aborts the caller asked for pass through; every other failure to get an answer is a {@link ParleyNetworkError}. */
function reporting(send: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await send(request);
    } catch (error) {
      if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) throw error;
      throw new ParleyNetworkError(request, error);
    }
  };
}

/** The data of a 2xx answer; a {@link ParleyApiError} for anything else. */
async function unwrap<D>(request: Promise<FetchResult<D>>): Promise<Exclude<D, undefined>> {
  const { data, error, response } = await request;
  if (!response.ok) throw new ParleyApiError(response, error);
  return data as Exclude<D, undefined>;
}

/**
 * A client for Parley's HTTP API. Every method resolves to the response body and rejects with a
 * {@link ParleyApiError} for any answer that is not 2xx, and with a {@link ParleyNetworkError}
 * when no answer arrives (connection refused, reset, DNS). `raw` is the underlying openapi-fetch
 * client, typed by the same document, for anything the methods do not cover (response headers,
 * abort signals, middleware).
 *
 * @example
 * const parley = createParleyClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.PARLEY_KEY! });
 * const agent = await parley.agents.create({ name: 'Ada', description: 'Billing', model: 'modelA-4' });
 */
export function createParleyClient(options: ParleyClientOptions) {
  const raw: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    // Read globalThis.fetch per call, so a fetch installed later (tests, polyfills) is used.
    fetch: reporting(options.fetch ?? ((request) => globalThis.fetch(request))),
  });
  const byId = (id: string) => ({ params: { path: { id } } });

  /** The stream's body, resuming after `lastEventId` (sent as `Last-Event-ID`, as browsers do). */
  const openStream = async (
    conversationId: string,
    lastEventId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<Uint8Array>> => {
    const { data, error, response } = await raw.GET('/api/conversations/{id}/stream', {
      params: { path: { id: conversationId } },
      parseAs: 'stream',
      ...(lastEventId === undefined ? {} : { headers: { 'Last-Event-ID': lastEventId } }),
      ...(signal ? { signal } : {}),
    });
    if (!response.ok || !data) throw new ParleyApiError(response, error);
    return data;
  };

  const history = (conversationId: string, query: T.MessageHistoryQuery = {}): Promise<T.MessageHistory> =>
    unwrap(raw.GET('/api/conversations/{id}/messages', { params: { path: { id: conversationId }, query } }));

  return {
    raw,
    agents: {
      // The server validates `model` against its own list; the document's enum is one server's.
      /** With `toolsSecret` when the agent got one (given, or generated for its first webhook tool): store it, it is never shown again. */
      create: (body: T.AgentCreate, options: CreateOptions = {}): Promise<T.AgentWithToolsSecret> =>
        unwrap(raw.POST('/api/agents', { body: body as Schemas['AgentCreate'], ...idempotent(options) })),
      list: (query: T.AgentListQuery = {}): Promise<T.AgentList> =>
        unwrap(raw.GET('/api/agents', { params: { query } })),
      get: (id: string): Promise<T.Agent> => unwrap(raw.GET('/api/agents/{id}', byId(id))),
      update: (id: string, body: T.AgentUpdate, options: WriteOptions = {}): Promise<T.AgentWithToolsSecret> =>
        unwrap(
          raw.PATCH('/api/agents/{id}', { ...byId(id), body: body as Schemas['AgentUpdate'], ...conditional(options) }),
        ),
      /** Also deletes the agent's conversations and their messages. */
      delete: (id: string, options: WriteOptions = {}): Promise<T.DeleteResult> =>
        unwrap(raw.DELETE('/api/agents/{id}', { ...byId(id), ...conditional(options) })),
    },
    conversations: {
      create: (body: T.ConversationCreate, options: CreateOptions = {}): Promise<T.Conversation> =>
        unwrap(raw.POST('/api/conversations', { body, ...idempotent(options) })),
      list: (query: T.ConversationListQuery = {}): Promise<T.ConversationList> =>
        unwrap(raw.GET('/api/conversations', { params: { query } })),
      get: (id: string): Promise<T.Conversation> => unwrap(raw.GET('/api/conversations/{id}', byId(id))),
      /** `{status: "completed"}` completes it; `metadata` replaces the stored object. */
      update: (id: string, body: T.ConversationUpdate, options: WriteOptions = {}): Promise<T.Conversation> =>
        unwrap(raw.PATCH('/api/conversations/{id}', { ...byId(id), body, ...conditional(options) })),
      /** Also deletes its messages; emits `conversation.deleted`. */
      delete: (id: string, options: WriteOptions = {}): Promise<T.DeleteResult> =>
        unwrap(raw.DELETE('/api/conversations/{id}', { ...byId(id), ...conditional(options) })),
      /**
       * The conversation's live stream as typed events, as an async iterator:
       * `for await (const event of parley.conversations.stream(id)) if (event.type === 'message.delta') …`.
       * It starts with the latest 50 messages (or those after `options.after`), then goes on live;
       * after a dropped connection it reconnects with `Last-Event-ID`, missing nothing; it ends
       * after `conversation.completed`, on `options.signal`, or when the loop `break`s.
       * @throws ParleyApiError for an error answer (404 unknown conversation, 401, …)
       */
      stream: (
        id: string,
        options: ConversationStreamOptions = {},
      ): AsyncGenerator<ConversationStreamEvent, void, undefined> =>
        conversationStream((lastEventId, signal) => openStream(id, lastEventId, signal), options),
    },
    messages: {
      send: (conversationId: string, body: T.MessageCreate, options: CreateOptions = {}): Promise<T.Message> =>
        unwrap(raw.POST('/api/conversations/{id}/messages', { ...byId(conversationId), body, ...idempotent(options) })),
      /** One message of the conversation (`not_found` when it is not one of its messages). */
      get: (conversationId: string, messageId: string): Promise<T.Message> =>
        unwrap(
          raw.GET('/api/conversations/{id}/messages/{messageId}', {
            params: { path: { id: conversationId, messageId } },
          }),
        ),
      /** One page: the `limit` newest messages before the `before` cursor, oldest first. */
      history,
      /**
       * Every message of the conversation, newest first, fetching page after page by following
       * `nextCursor` only as far as the loop reads. For oldest-first order, collect and reverse.
       */
      async *iterate(
        conversationId: string,
        iterateOptions: IterateOptions = {},
      ): AsyncGenerator<T.Message, void, undefined> {
        let before: string | undefined;
        do {
          const page = await history(conversationId, {
            limit: iterateOptions.pageSize ?? 100,
            ...(before ? { before } : {}),
          });
          for (let index = page.messages.length - 1; index >= 0; index--) yield page.messages[index]!;
          before = page.hasMore ? page.nextCursor : undefined;
        } while (before);
      },
    },
    replies: {
      /**
       * `POST /api/conversations/:id/reply`: asks the conversation's agent to reply to the latest
       * message (202); the reply arrives on the stream and in the history.
       */
      request: (conversationId: string): Promise<T.ReplyRequested> =>
        unwrap(raw.POST('/api/conversations/{id}/reply', byId(conversationId))),
      /**
       * `POST /api/conversations/:id/reply/cancel`: stops every reply of the conversation that is
       * queued, being made or waiting for tool results (200, with the `inReplyTo` of each reply
       * stopped; `[]` when none was). What a stopped reply had written is stored with
       * `metadata.reply.finishReason: "cancelled"`.
       */
      cancel: (conversationId: string, options: CreateOptions = {}): Promise<T.RepliesCancelled> =>
        unwrap(raw.POST('/api/conversations/{id}/reply/cancel', { ...byId(conversationId), ...idempotent(options) })),
      /**
       * `POST /api/conversations/:id/tool-results`: answers the calls a paused reply waits for —
       * `{toolCallId, output}` for a client tool, `{toolCallId, approved, reason?}` for an approval
       * (202, with the calls still waiting). The reply resumes once none is waiting.
       */
      submitToolResults: (
        conversationId: string,
        body: T.ToolResults,
        options: CreateOptions = {},
      ): Promise<T.ToolResultsAccepted> =>
        unwrap(
          raw.POST('/api/conversations/{id}/tool-results', { ...byId(conversationId), body, ...idempotent(options) }),
        ),
      /**
       * `GET /api/conversations/:id/stream`: the raw `text/event-stream` body (read it with any SSE
       * parser; `conversations.stream` parses it for you). `after` is a cursor (a `message`
       * event's `id`) to resume after.
       */
      stream: (
        conversationId: string,
        streamOptions: { after?: string; signal?: AbortSignal } = {},
      ): Promise<ReadableStream<Uint8Array>> => openStream(conversationId, streamOptions.after, streamOptions.signal),
    },
    webhooks: {
      /** Without `secret`, the answer carries a generated one: store it, it is never shown again. */
      create: (body: T.WebhookCreate, options: CreateOptions = {}): Promise<T.WebhookEndpointCreated> =>
        unwrap(raw.POST('/api/webhooks', { body, ...idempotent(options) })),
      list: (query: T.WebhookListQuery = {}): Promise<T.WebhookEndpointList> =>
        unwrap(raw.GET('/api/webhooks', { params: { query } })),
      get: (id: string): Promise<T.WebhookEndpoint> => unwrap(raw.GET('/api/webhooks/{id}', byId(id))),
      update: (id: string, body: T.WebhookUpdate, options: WriteOptions = {}): Promise<T.WebhookEndpoint> =>
        unwrap(raw.PATCH('/api/webhooks/{id}', { ...byId(id), body, ...conditional(options) })),
      delete: (id: string, options: WriteOptions = {}): Promise<T.DeleteResult> =>
        unwrap(raw.DELETE('/api/webhooks/{id}', { ...byId(id), ...conditional(options) })),
      /** The endpoint's delivery attempts, newest first; pass `nextCursor` as `before` for older ones. */
      deliveries: (id: string, query: T.DeliveryListQuery = {}): Promise<T.DeliveryList> =>
        unwrap(raw.GET('/api/webhooks/{id}/deliveries', { params: { path: { id }, query } })),
      /** Queues one new attempt (trigger `manual`) of the event of a logged attempt. */
      retryDelivery: (id: string, deliveryId: string): Promise<T.RetryResult> =>
        unwrap(raw.POST('/api/webhooks/{id}/deliveries/{deliveryId}/retry', { params: { path: { id, deliveryId } } })),
      /** Re-sends the retained events of `[since, until]` the endpoint has not answered with a 2xx. */
      recover: (id: string, body: T.RecoverRequest): Promise<T.RecoverResult> =>
        unwrap(raw.POST('/api/webhooks/{id}/recover', { ...byId(id), body })),
      /** Sends an example event of `eventType` now and answers with its log entry. */
      test: (id: string, body: T.WebhookTestRequest): Promise<T.DeliveryAttempt> =>
        unwrap(raw.POST('/api/webhooks/{id}/test', { ...byId(id), body })),
      /** Replaces the signing secret; the old one also signs for 24 h. */
      rotateSecret: (id: string, body: T.RotateSecretRequest = {}): Promise<T.RotateSecretResult> =>
        unwrap(raw.POST('/api/webhooks/{id}/rotate-secret', { ...byId(id), body })),
    },
    /** What the key this client calls with grants: its workspace, plan and scopes (`GET /api/key`). */
    key: (): Promise<T.CallingKey> => unwrap(raw.GET('/api/key')),
    /** Token usage totals of the workspace's replies, per agent, model, user or day (`agents:read`). */
    usage: (query: T.UsageQuery = {}): Promise<T.UsageReport> => unwrap(raw.GET('/api/usage', { params: { query } })),
    /** The workspace's event log, oldest first (`events:read`). */
    events: {
      list: (query: T.EventListQuery = {}): Promise<T.EventList> =>
        unwrap(raw.GET('/api/events', { params: { query } })),
      get: (id: string): Promise<T.Event> => unwrap(raw.GET('/api/events/{id}', byId(id))),
    },
    /** The plants sample (plants-openapi.json); its errors are flat, so their `code` is `http_error`. */
    plants: {
      list: (query: T.PlantListQuery = {}): Promise<T.Plant[]> =>
        unwrap(raw.GET('/sandbox/plants', { params: { query } })),
      create: (body: T.NewPlant): Promise<T.Plant> => unwrap(raw.POST('/sandbox/plants', { body })),
      delete: async (id: number): Promise<void> => {
        await unwrap(raw.DELETE('/sandbox/plants/{id}', { params: { path: { id } } }));
      },
    },
    /** `GET /healthz`: the process serves requests. */
    health: (): Promise<T.Health> => unwrap(raw.GET('/healthz')),
    /** `GET /readyz`: storage answers; rejects with `service_unavailable` (503) when it does not. */
    ready: (): Promise<T.Health> => unwrap(raw.GET('/readyz')),
    /** `GET /openapi.json`: the OpenAPI 3.1 document this client was generated from (a newer one, maybe). */
    openApiDocument: (): Promise<Record<string, unknown>> => unwrap(raw.GET('/openapi.json')),
  };
}

/** The client {@link createParleyClient} returns. */
export type ParleyClient = ReturnType<typeof createParleyClient>;
