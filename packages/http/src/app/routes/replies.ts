/**
 * @module `/conversations/:id/reply` and `/conversations/:id/stream`: asking for an agent's reply,
 * and a conversation's live stream as server-sent events (README "Agents that reply", "Live streams").
 */
import {
  ConversationStreamQuerySchema,
  parse,
  RepliesCancelledSchema,
  ReplyRequestedSchema,
  type Core,
  type StreamItem,
} from '@parley/core';
import { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints } from './endpoint.js';
import { json, setHeader } from '../response.js';

const byId = idPath('conversation', 'conv_');
const notFound = "No conversation with this id in the key's workspace.";

/** Options of {@link replyRoutes}. */
export interface ReplyRoutesOptions {
  /** Quiet time after which a stream sends a `:` comment (and re-checks storage), in ms; default 15 000. */
  keepAliveMs?: number;
  /**
   * Aborted when the server shuts down: open streams end at once (clients resume elsewhere with
   * `Last-Event-ID`) instead of holding the drain open until its deadline.
   */
  shutdown?: AbortSignal;
}

const STREAM_DESCRIPTION = `Server-sent events (\`text/event-stream\`):
- \`event: message\` for each message stored in the conversation, oldest first; \`id:\` is a cursor, \`data:\` the message.
- \`event: message.delta\` with \`{inReplyTo, delta, attempt}\` while a reply is being generated (a new \`attempt\` restarts the text).
- \`event: reply.failed\` with \`{inReplyTo, error}\` when a reply is given up.
- \`event: tool.call\` with \`{inReplyTo, toolCall}\` when the model decides a tool call (its streamed argument deltas assembled: \`toolCall\` is \`{id, name, arguments}\`).
- \`event: tool.result\` with the stored \`tool\` message (a tool's result); \`id:\` is a cursor like a message's.
- \`event: reply.requires_action\` with \`{conversationId, inReplyTo, toolCalls}\` when a reply pauses for client tools or approvals (answer with \`POST /api/conversations/{id}/tool-results\`).
- \`event: reply.cancelled\` with \`{conversationId, inReplyTo}\` when a reply is stopped (\`POST /api/conversations/{id}/reply/cancel\`); the text it had written arrives after it as a \`message\` whose \`metadata.reply.finishReason\` is \`cancelled\`.
- \`event: context.trimmed\` with \`{inReplyTo, messages, tokens, trimmed}\` when a reply's prompt left \`trimmed\` older messages out to fit the model's context window (\`messages\` sent, about \`tokens\` tokens); the stored reply records the same in \`metadata.reply.context\`.
- \`event: conversation.completed\` with the conversation; then the stream ends.
- A \`: keep-alive\` comment after 15 s without events.

Reconnecting with \`Last-Event-ID\` (or \`?after=<cursor>\`) first sends every message stored after that one, then goes on live: no message is missed or sent twice, on this or any other instance. Without a cursor the stream starts with the latest 50 messages.`;

async function write(stream: SSEStreamingApi, item: StreamItem): Promise<void> {
  switch (item.type) {
    case 'message':
    case 'tool.result':
      return stream.writeSSE({ event: item.type, id: item.cursor, data: JSON.stringify(item.message) });
    case 'message.delta':
    case 'reply.failed':
    case 'tool.call':
    case 'reply.requires_action':
    case 'reply.cancelled':
    case 'context.trimmed':
      return stream.writeSSE({ event: item.type, data: JSON.stringify(item.data) });
    case 'conversation.completed':
      return stream.writeSSE({ event: 'conversation.completed', data: JSON.stringify(item.conversation) });
    case 'idle':
      await stream.write(': keep-alive\n\n');
  }
}

/** Reply and stream routes, to be mounted at `/api/conversations` behind authentication. */
export function replyRoutes(core: Core, options: ReplyRoutesOptions = {}): Hono<ParleyEnv> {
  const endpoint = endpoints();
  return new Hono<ParleyEnv>()
    .post(
      '/:id/reply',
      ...endpoint(
        {
          operationId: 'requestReply',
          summary: 'Ask the agent for a reply',
          description:
            "Queues a reply of the conversation's agent to its latest message (also when the agent's `autoReply` is `false`). The reply arrives on the stream (deltas, then the stored `assistant` message, which emits `message.received`).",
          tag: 'Messages',
          scope: 'conversations:write',
          path: byId,
          success: { status: 202, description: 'The reply was asked for.', schema: ReplyRequestedSchema },
          errors: {
            404: notFound,
            409: "`conflict`: the conversation is completed, its agent is inactive, or no language model is configured for the agent's `model`.",
          },
        },
        async ({ scope, params }, c) => json(c, await core.replies.request(scope, params.id), 202),
      ),
    )
    .post(
      '/:id/reply/cancel',
      ...endpoint(
        {
          operationId: 'cancelReply',
          summary: 'Stop the replies being made',
          description:
            'Stops every reply of the conversation that is queued, being made (by whichever worker, within a second) or waiting for tool results. A reply being made stops its model call; the text it had written is stored as an `assistant` message with `metadata.reply.finishReason: "cancelled"`. A reply waiting for tool results is closed: each waiting call gets `{"error": "cancelled"}` as its result and `pendingToolCalls` is emptied. Each reply stopped records `reply.cancelled` (event, webhooks, stream). Answers the `inReplyTo` of the replies stopped, `[]` when there was nothing to stop.',
          tag: 'Messages',
          scope: 'conversations:write',
          path: byId,
          success: { status: 200, description: 'The replies stopped.', schema: RepliesCancelledSchema },
          errors: {
            404: notFound,
            409: '`conflict`: answers to the calls of a paused reply kept coming while it was being closed; cancel again.',
          },
        },
        async ({ scope, params }, c) => json(c, await core.replies.cancel(scope, params.id)),
      ),
    )
    .get(
      '/:id/stream',
      ...endpoint(
        {
          operationId: 'streamConversation',
          summary: 'Stream the conversation live',
          description: STREAM_DESCRIPTION,
          tag: 'Messages',
          scope: 'conversations:read',
          path: byId,
          query: ConversationStreamQuerySchema,
          success: {
            status: 200,
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          errors: {
            400: '`validation_failed` (an unknown parameter) or `invalid_request` (an unparseable, forged or foreign cursor).',
            404: notFound,
          },
        },
        async ({ scope, params, query }, c) => {
          const cursor = parse(ConversationStreamQuerySchema, query).after;
          const after = c.req.header('last-event-id') || cursor;
          // Opened before the response starts, so a bad id or cursor is an ordinary error answer.
          const live = await core.openStream(scope, params.id, {
            ...(after !== undefined && { after }),
            idleMs: options.keepAliveMs ?? 15_000,
          });
          setHeader(c, 'Cache-Control', 'no-cache');
          // Proxies such as nginx would otherwise buffer the stream.
          setHeader(c, 'X-Accel-Buffering', 'no');
          return streamSSE(
            c,
            async (stream) => {
              stream.onAbort(() => void live.close());
              const end = () => void live.close();
              options.shutdown?.addEventListener('abort', end, { once: true });
              if (options.shutdown?.aborted) end();
              try {
                for await (const item of live) {
                  if (stream.aborted || stream.closed) break;
                  await write(stream, item);
                }
              } finally {
                options.shutdown?.removeEventListener('abort', end);
              }
            },
            async () => {
              // The client went away or storage failed mid-stream: the client reconnects with Last-Event-ID.
              await live.close();
            },
          );
        },
      ),
    );
}
