/**
 * @module `/chat`: the AI SDK's chat protocol over Parley's conversations, so `useChat` with
 * `DefaultChatTransport` talks to Parley unchanged (docs/ai-sdk-chat.md). A translation of the
 * conversation's live stream (`chat-chunks.ts`), not a stream of its own.
 */
import {
  ErrorCode,
  ParleyError,
  messageCursor,
  parse,
  validationFailed,
  type ConversationStream,
  type Core,
  type StreamItem,
  type ToolResultsInput,
  type WorkspaceScope,
} from '@parley/core';
import type { UIMessageChunk } from 'ai';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { OpenAPIV3_1 } from 'openapi-types';
import * as v from 'valibot';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { respond, setHeader } from '../response.js';
import { replyChunks, type ReplyChunksOptions } from './chat-chunks.js';
import { endpoints, type BodyReader } from './endpoint.js';
import type { ReplyRoutesOptions } from './replies.js';

/** A part of a UI message: its `type` (`text` parts carry `text`); other fields pass through. */
const UIMessagePartSchema = v.looseObject({
  type: v.pipe(v.string(), v.maxLength(200)),
  text: v.optional(v.string()),
});

/** A UI message as `useChat` sends it (AI SDK 5/6: `{id, role, parts}`). */
const UIMessageSchema = v.looseObject({
  id: v.pipe(v.string(), v.maxLength(255)),
  role: v.picklist(['system', 'user', 'assistant']),
  parts: v.array(UIMessagePartSchema),
});

/**
 * The body `DefaultChatTransport` posts: the chat `id` (a conversation id here), its `messages`
 * (the last one is what is new), the `trigger`; other fields (the transport's `body` option) are
 * ignored.
 */
export const ChatRequestSchema = v.pipe(
  v.looseObject({
    id: v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.description("The conversation's id (conv_…).")),
    messages: v.pipe(
      v.array(UIMessageSchema),
      v.minLength(1),
      v.description("The chat's UI messages, oldest first; only the last one is read (Parley keeps the history)."),
    ),
    trigger: v.optional(
      v.pipe(
        v.literal('submit-message'),
        v.description(
          '`submit-message`; regenerating a reply (`regenerate-message`) is not supported: Parley keeps every reply.',
        ),
      ),
    ),
    messageId: v.optional(v.string()),
  }),
  v.description('What `DefaultChatTransport` sends: `{id, messages, trigger, messageId?}`.'),
);
/** The input of `POST /api/chat`. */
export type ChatRequestInput = v.InferInput<typeof ChatRequestSchema>;
type ChatRequest = v.InferOutput<typeof ChatRequestSchema>;

const STREAM_HEADERS = {
  // The AI SDK's UI message stream protocol, version 1 (`UI_MESSAGE_STREAM_HEADERS` of the `ai` package).
  'x-vercel-ai-ui-message-stream': 'v1',
  'Cache-Control': 'no-cache',
  // Proxies such as nginx would otherwise buffer the stream.
  'X-Accel-Buffering': 'no',
} as const;

const STREAM_RESPONSE: Record<string, OpenAPIV3_1.MediaTypeObject> = {
  'text/event-stream': {
    schema: { type: 'string' },
    example:
      'data: {"type":"start"}\n\ndata: {"type":"start-step"}\n\ndata: {"type":"text-start","id":"text-1"}\n\ndata: {"type":"text-delta","id":"text-1","delta":"Hello"}\n\ndata: {"type":"text-end","id":"text-1"}\n\ndata: {"type":"finish-step"}\n\ndata: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n',
  },
};

const CHAT_DESCRIPTION = `The AI SDK's chat protocol (\`useChat\` with \`DefaultChatTransport({ api: '<base>/api/chat' })\`): stores the last message when it is a \`user\` message (its text parts joined by line breaks), asks the agent for a reply when it does not reply on its own, and streams the reply as the UI message stream protocol (\`x-vercel-ai-ui-message-stream: v1\`): \`start\`, per step \`start-step\`, \`text-start\`/\`text-delta\`/\`text-end\`, \`tool-input-available\` and \`tool-output-available\`, \`finish-step\`; then \`finish\` and \`data: [DONE]\`. A reply that pauses for client tools or approvals ends its stream with the waiting calls (\`tool-input-available\` without output, \`tool-approval-request\` for approvals) and \`finish\`; a reply given up is an \`error\` chunk. A last message of role \`assistant\` that answers the waiting calls (tool parts with \`output-available\`, \`output-error\`, \`approval-responded\` or \`output-denied\`) submits those answers and streams the rest of the reply. See docs/ai-sdk-chat.md.`;

const RESUME_DESCRIPTION = `Resumes the reply under way in the conversation (\`useChat\`'s \`resume: true\`, which calls \`GET <api>/<chat id>/stream\`): replays the reply's UI message stream from its \`start\` chunk (\`messageId\` is the reply's first stored step), its stored steps whole, then goes on live, as \`DefaultChatTransport\` expects by default (\`resumeStreamIsReplay\`). Deltas are not stored: the step being generated when the stream opens is sent once it is stored; later steps stream live. A reply paused for tool calls is replayed up to its waiting calls and \`finish\`. 204 when no reply is under way (none asked, stored already, given up, or the conversation is completed).`;

/** The chat routes, to be mounted at `/api/chat` behind authentication. */
export function chatRoutes(core: Core, body: BodyReader, options: ReplyRoutesOptions = {}): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  const idleMs = options.keepAliveMs ?? 15_000;
  const underWay = (scope: WorkspaceScope, conversationId: string) => async () =>
    (await core.replies.inProgress(scope, conversationId)) !== null;
  return new Hono<ParleyEnv>()
    .post(
      '/',
      ...endpoint(
        {
          operationId: 'chat',
          summary: 'Send a chat message and stream the reply (AI SDK)',
          description: CHAT_DESCRIPTION,
          tag: 'Messages',
          scope: 'conversations:write',
          body: ChatRequestSchema,
          success: { status: 200, description: 'The reply as a UI message stream.', content: STREAM_RESPONSE },
          errors: {
            404: "No conversation with this id in the key's workspace.",
            409: "`conflict`: the conversation is completed, its agent is inactive or no language model is configured for the agent's `model`; or a tool call answered is not waiting.",
          },
        },
        async ({ scope, body: input }, c) => {
          const request = parse(ChatRequestSchema, input);
          const last = request.messages.at(-1)!;
          const opened =
            last.role === 'assistant'
              ? await answerToolCalls(core, scope, request, idleMs)
              : await sendUserMessage(core, scope, request, idleMs);
          return streamReply(c, opened, { shutdown: options.shutdown, underWay: underWay(scope, request.id) });
        },
      ),
    )
    .get(
      '/:id/stream',
      ...endpoint(
        {
          operationId: 'resumeChatStream',
          summary: 'Resume the reply under way (AI SDK)',
          description: RESUME_DESCRIPTION,
          tag: 'Messages',
          scope: 'conversations:read',
          path: idPath('conversation', 'conv_'),
          success: { status: 200, description: 'The reply as a UI message stream.', content: STREAM_RESPONSE },
          otherSuccesses: { 204: 'No reply is under way: nothing to resume.' },
          errors: { 404: "No conversation with this id in the key's workspace." },
        },
        async ({ scope, params }, c) => {
          const progress = await core.replies.inProgress(scope, params.id);
          if (!progress) return respond(c, null, 204);
          const live = await core.openStream(scope, params.id, {
            after: messageCursor(params.id, progress.inReplyTo),
            idleMs,
          });
          const chunks: ReplyChunksOptions = {
            inReplyTo: progress.inReplyTo,
            after: progress.inReplyTo,
            resumed: true,
            ...(progress.firstStepId !== null && { messageId: progress.firstStepId }),
          };
          return streamReply(
            c,
            { live, items: live, chunks },
            { shutdown: options.shutdown, underWay: underWay(scope, params.id) },
          );
        },
      ),
    );
}

/** An open conversation stream, what to translate (the stream, or items standing in for it) and how. */
interface OpenedReply {
  live: ConversationStream;
  items: AsyncIterable<StreamItem> | Iterable<StreamItem>;
  chunks: ReplyChunksOptions;
}

/** The checks before a user message is stored: the reply it asks for can come. */
async function replyCanCome(
  core: Core,
  scope: WorkspaceScope,
  conversationId: string,
): Promise<{ automatic: boolean }> {
  const conversation = await core.conversations.get(scope, conversationId);
  if (conversation.status === 'completed')
    throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed and takes no messages.`);
  const agent = await core.agents.get(scope, conversation.agentId);
  if (agent.status !== 'active')
    throw new ParleyError(ErrorCode.conflict, `The agent of conversation '${conversationId}' is inactive.`);
  const automatic = core.replies.repliesSomewhere(agent);
  if (!automatic && !core.replies.modelNames().includes(agent.model))
    throw new ParleyError(
      ErrorCode.conflict,
      `No language model is configured for the agent's model '${agent.model}'.`,
      { model: agent.model },
    );
  return { automatic };
}

/**
 * Stores the chat's new user message (after subscribing to the conversation's stream, so no delta
 * of the reply is missed) and asks for a reply unless the agent replies on its own.
 * @throws ParleyError `validation_failed`, `not_found`, `conflict`
 */
async function sendUserMessage(
  core: Core,
  scope: WorkspaceScope,
  request: ChatRequest,
  idleMs: number,
): Promise<OpenedReply> {
  const conversationId = request.id;
  const index = request.messages.length - 1;
  const last = request.messages[index]!;
  if (last.role !== 'user')
    throw validationFailed([
      {
        path: `messages.${index}.role`,
        message: 'The last message must be a user message, or an assistant message answering waiting tool calls.',
      },
    ]);
  const content = last.parts
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
  if (content.trim() === '')
    throw validationFailed([{ path: `messages.${index}.parts`, message: 'The user message has no text part.' }]);
  const { automatic } = await replyCanCome(core, scope, conversationId);
  // Subscribed before the message is stored: the reply's first delta cannot come before it.
  const live = await core.openStream(scope, conversationId, { idleMs });
  try {
    const message = await core.conversations.sendMessage(scope, conversationId, { role: 'user', content });
    if (!automatic) await core.replies.request(scope, conversationId);
    return { live, items: live, chunks: { inReplyTo: message.id, after: message.id } };
  } catch (error) {
    await live.close();
    throw error;
  }
}

/** The answer a tool part of `useChat` holds for a waiting call, as `POST …/tool-results` takes it. */
function answerOf(part: Record<string, unknown>): ToolResultsInput['results'][number] | null {
  const toolCallId = part.toolCallId;
  if (typeof toolCallId !== 'string') return null;
  const approval = (part.approval ?? {}) as { approved?: unknown; reason?: unknown };
  const reason = typeof approval.reason === 'string' ? { reason: approval.reason } : {};
  switch (part.state) {
    case 'output-available':
      return { toolCallId, output: part.output ?? null };
    case 'output-error':
      return { toolCallId, output: { error: typeof part.errorText === 'string' ? part.errorText : 'error' } };
    case 'approval-responded':
      return typeof approval.approved === 'boolean' ? { toolCallId, approved: approval.approved, ...reason } : null;
    case 'output-denied':
      return { toolCallId, approved: false, ...reason };
    default:
      return null;
  }
}

/**
 * Submits the answers the chat's last (assistant) message gives to the conversation's waiting
 * tool calls, then streams the rest of the reply: what is stored from now on (the client has the
 * rest), or the calls still waiting.
 * @throws ParleyError `validation_failed`, `not_found`, `conflict` (no call waits, or one answered is not waiting)
 */
async function answerToolCalls(
  core: Core,
  scope: WorkspaceScope,
  request: ChatRequest,
  idleMs: number,
): Promise<OpenedReply> {
  const conversationId = request.id;
  const index = request.messages.length - 1;
  const progress = await core.replies.inProgress(scope, conversationId);
  if (!progress?.paused)
    throw new ParleyError(ErrorCode.conflict, `No tool call of conversation '${conversationId}' waits for an answer.`);
  const waiting = new Set(
    (await core.conversations.get(scope, conversationId)).pendingToolCalls.map((call) => call.id),
  );
  const results = request.messages[index]!.parts.flatMap((part) => {
    const answer = answerOf(part);
    return answer && waiting.has(answer.toolCallId) ? [answer] : [];
  });
  if (results.length === 0)
    throw validationFailed([
      {
        path: `messages.${index}.parts`,
        message:
          'No tool part answers a waiting call (output-available, output-error, approval-responded or output-denied).',
      },
    ]);
  const latest = (await core.conversations.history(scope, conversationId, { limit: 1 })).messages.at(-1)!;
  // Subscribed before the answers are kept: the reply cannot go on before.
  const live = await core.openStream(scope, conversationId, {
    after: messageCursor(conversationId, latest.id),
    idleMs,
  });
  try {
    const accepted = await core.replies.submitToolResults(scope, conversationId, { results });
    const chunks = { inReplyTo: progress.inReplyTo, after: latest.id };
    if (accepted.pendingToolCalls.length === 0) return { live, items: live, chunks };
    // Calls still wait: the stream says so, as the pause did.
    const data = { conversationId, inReplyTo: progress.inReplyTo, toolCalls: accepted.pendingToolCalls };
    return { live, items: [{ type: 'reply.requires_action', data } satisfies StreamItem], chunks };
  } catch (error) {
    await live.close();
    throw error;
  }
}

/** Options of {@link streamReply}. */
interface StreamReplyOptions {
  shutdown: AbortSignal | undefined;
  /** Whether a reply of the conversation is still under way; asked when the stream is quiet. */
  underWay: () => Promise<boolean>;
}

/**
 * Answers `text/event-stream` with the reply's UI message chunks, then `data: [DONE]`. Each time
 * the stream is quiet (the keep-alive interval) it checks that a reply is still under way: none,
 * twice in a row, means the request ended without a stored step or a signal this stream got (a
 * `reply.failed` lost by the feed, a request skipped), and ends the stream with an `error` chunk
 * rather than waiting forever. Twice, because a new message's request is queued by the worker's
 * relay a moment after the message is stored.
 */
function streamReply(c: Context<ParleyEnv>, opened: OpenedReply, options: StreamReplyOptions): Response {
  const { live, items, chunks } = opened;
  const { shutdown } = options;
  for (const [name, value] of Object.entries(STREAM_HEADERS)) setHeader(c, name, value);
  return streamSSE(
    c,
    async (stream) => {
      stream.onAbort(() => void live.close());
      const end = () => void live.close();
      shutdown?.addEventListener('abort', end, { once: true });
      if (shutdown?.aborted) end();
      let misses = 0;
      try {
        for await (const part of replyChunks(items, chunks)) {
          if (stream.aborted || stream.closed) return;
          if (part !== 'keep-alive') {
            await stream.writeSSE({ data: JSON.stringify(part) });
            continue;
          }
          await stream.write(': keep-alive\n\n');
          if (await options.underWay()) misses = 0;
          else if (++misses >= 2) {
            const error: UIMessageChunk = { type: 'error', errorText: 'The reply ended without being stored.' };
            await stream.writeSSE({ data: JSON.stringify(error) });
            break;
          }
        }
        await stream.writeSSE({ data: '[DONE]' });
      } finally {
        shutdown?.removeEventListener('abort', end);
        await live.close();
      }
    },
    async (_error, stream) => {
      // Storage failed mid-stream: the client is told, and may resume with GET /api/chat/:id/stream.
      const error: UIMessageChunk = { type: 'error', errorText: 'The stream failed; the reply can be resumed.' };
      await stream.writeSSE({ data: JSON.stringify(error) });
      await live.close();
    },
  );
}
