/**
 * @module Running the tool calls of a reply step (docs/replies-and-streams.md#tools): signed POSTs to
 * webhook tools, results as JSON text, and the prompt that hands calls and results back to the model.
 */
import { signPayload } from '../delivery/signing.js';
import type { PromptMessage } from '../ports/language-model.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import { TOOL_TIMEOUT_MS } from '../schemas/tools.js';
import type { Conversation, Message, PendingToolCall, Tool, ToolCall } from '../types.js';
import { storableJson } from '../validation.js';

/** The most characters a tool result may take (a message's content limit). */
export const MAX_TOOL_RESULT_CHARS = 100_000;

/** How a paused call was answered (`POST /api/conversations/:id/tool-results`), kept with the pending call until the reply resumes. */
export type ToolAnswer = { output: unknown } | { approved: boolean; reason?: string };

/** A pending call with its answer once given (never shown by the API). */
export interface StoredPendingToolCall extends PendingToolCall {
  answer?: ToolAnswer;
}

/**
 * A conversation as stored while a reply is paused: `pendingToolCalls` lists the calls still
 * waiting, and `toolAnswers` — a hidden field (`HIDDEN_FIELDS`): in no response, event or log —
 * the calls answered so far with their answers, until the reply resumes.
 */
export type PausedConversation = Conversation & {
  toolAnswers?: StoredPendingToolCall[];
  /**
   * The W3C trace context of the reply that paused (its `invoke_agent` span), also hidden: the
   * reply that resumes it links to it (docs/observability.md#across-the-queue); `null` outside a trace.
   */
  pausedTraceContext?: string | null;
};

/** The calls of `conversation`'s paused step answered so far. */
export const toolAnswersOf = (conversation: Conversation): StoredPendingToolCall[] =>
  (conversation as PausedConversation).toolAnswers ?? [];

/** The result the model sees when a call fails: `{"error": "…"}`. */
export const errorResult = (error: string, extra: object = {}): string => JSON.stringify({ error, ...extra });

/** Where a webhook tool call comes from: sent in its body. */
export interface ToolCallContext {
  conversationId: string;
  agentId: string;
}

/**
 * Calls a webhook tool: POSTs `{toolCallId, name, arguments, conversationId, agentId}` to its `url`,
 * signed like a webhook delivery (Standard Webhooks, `webhook-id` the call's id) with the agent's
 * tools secret, through `transport` (the SSRF guard at connect time), within the tool's
 * `timeoutMs` (default 15 s). Resolves with the result as JSON text: a 2xx JSON body, else
 * `{"error": "…"}` saying what happened (so the model can recover). Never rejects.
 */
export async function callWebhookTool(
  transport: WebhookTransport,
  tool: Tool,
  secret: string | undefined,
  call: ToolCall,
  context: ToolCallContext,
  nowMs: number,
  signal?: AbortSignal,
): Promise<string> {
  if (!tool.url) return errorResult('The tool has no url.');
  if (!secret) return errorResult('The agent has no tools secret to sign the call with.');
  const body = JSON.stringify({ toolCallId: call.id, name: call.name, arguments: call.arguments, ...context });
  const timestamp = Math.floor(nowMs / 1000);
  const response = await transport.send(
    {
      url: tool.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Parley-Tools/1',
        'webhook-id': call.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signPayload(secret, call.id, timestamp, body),
      },
      body,
      timeoutMs: tool.timeoutMs ?? TOOL_TIMEOUT_MS.default,
      maxResponseBytes: MAX_TOOL_RESULT_CHARS * 4,
    },
    signal,
  );
  if (response.status === null) return errorResult(response.error ?? 'No response.');
  if (response.status < 200 || response.status > 299) return errorResult(`The tool answered HTTP ${response.status}.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.responseBody ?? '');
  } catch {
    return errorResult("The tool's answer is not JSON.");
  }
  // The receiver's strings are repaired, not refused: U+0000 and unpaired surrogates become U+FFFD
  // (docs/errors.md#strings).
  const result = JSON.stringify(storableJson(parsed));
  return result.length > MAX_TOOL_RESULT_CHARS
    ? errorResult(`The tool's answer is longer than ${MAX_TOOL_RESULT_CHARS} characters.`)
    : result;
}

/** The result of an answered paused call, or `null` when it was approved (the webhook is then called). */
export function answeredResult(pending: StoredPendingToolCall): string | null {
  const answer = pending.answer;
  if (!answer) return errorResult('The call was never answered.');
  if ('output' in answer) {
    const result = JSON.stringify(answer.output ?? null);
    return result.length > MAX_TOOL_RESULT_CHARS ? errorResult('The output is too long.') : result;
  }
  if (!answer.approved) return errorResult('rejected', answer.reason === undefined ? {} : { reason: answer.reason });
  return pending.kind === 'client' ? errorResult('Approved, but a client tool needs an output.') : null;
}

/** A stored MCP tool call as the model made it: named `<server>__<name>`, without `server`. */
function modelCall({ server, ...call }: ToolCall): ToolCall {
  return { ...call, name: `${server}__${call.name}` };
}

/**
 * The prompt of a conversation's messages, oldest first: each assistant message that asked for
 * tools is followed by the results of its calls (stored later, possibly after other messages), and
 * calls without every result in `messages` (cut off by the context window) are left out, since
 * providers refuse a call without its result and a result without its call.
 */
export function promptMessages(messages: readonly Message[]): PromptMessage[] {
  const results = new Map<string, Message>();
  // Each reply's last step: messages stored while the reply was under way (paused) follow it.
  const lastStep = new Map<unknown, string>();
  for (const message of messages) {
    if (message.role === 'tool' && message.toolCallId) results.set(message.toolCallId, message);
    const reply = message.metadata.reply as { inReplyTo?: unknown } | undefined;
    if (message.role === 'assistant' && reply) lastStep.set(reply.inReplyTo, message.id);
  }
  const prompt: PromptMessage[] = [];
  let replyEnd: string | undefined;
  const waiting: Message[] = [];
  for (const message of ordered()) {
    if (message.role === 'tool') continue;
    if (message.role !== 'assistant') {
      prompt.push({ role: message.role, content: message.content });
      continue;
    }
    const calls = message.toolCalls ?? [];
    if (calls.length === 0 || !calls.every((call) => results.has(call.id))) {
      if (message.content !== '') prompt.push({ role: 'assistant', content: message.content });
      continue;
    }
    // The model knows an MCP tool as `<server>__<name>` (docs/mcp.md).
    const named = calls.map((call) => (call.server === undefined ? call : modelCall(call)));
    prompt.push({ role: 'assistant', content: message.content, toolCalls: named });
    for (const call of named)
      prompt.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: results.get(call.id)!.content });
  }
  return prompt;

  /** `messages` with those stored while a reply was under way moved after its last step. */
  function* ordered(): Generator<Message> {
    for (const message of messages) {
      const reply = message.metadata.reply as { inReplyTo?: unknown } | undefined;
      const isStep = message.role === 'assistant' && reply !== undefined;
      if (replyEnd !== undefined && !isStep && message.role !== 'tool' && message.id < replyEnd) {
        waiting.push(message);
        continue;
      }
      yield message;
      if (isStep) {
        replyEnd = lastStep.get(reply.inReplyTo);
        if (message.id === replyEnd) {
          replyEnd = undefined;
          yield* waiting.splice(0);
        }
      }
    }
    yield* waiting.splice(0);
  }
}
