/**
 * @module Span names and attributes of the OpenTelemetry GenAI semantic conventions (Development
 * status, agent spans, inference spans, `execute_tool`), and of Parley's webhook attempts
 * (docs/observability.md#spans). Content attributes are set only when the core's `Tracing` captures content.
 */
import { SpanKind, type Attributes, type Span, type SpanOptions } from '@opentelemetry/api';
import { markFailed } from './tracing.js';
import type { LanguageModel, ModelRequest, PromptMessage, TokenUsage, FinishReason } from '../ports/language-model.js';
import type { AgentRecord, DomainEvent, ToolCall } from '../types.js';

/** A span to start: its name and options, for `Tracing.inSpan(name, options, …)`. */
export type SpanStart = [name: string, options: SpanOptions];

/** What the spans of one reply share: its agent, conversation and language model. */
export interface ReplyTrace {
  agent: Pick<AgentRecord, 'id' | 'name' | 'model'>;
  conversationId: string;
  workspaceId: string;
  model: LanguageModel;
}

/** `gen_ai.provider.name` of a model: its own, else `parley` (an unnamed model of the host). */
const providerOf = (model: LanguageModel) => model.provider ?? 'parley';
/** `gen_ai.request.model`: the provider's model id, else the agent's model name. */
const requestModelOf = (reply: ReplyTrace) => reply.model.modelId ?? reply.agent.model;

function common(reply: ReplyTrace): Attributes {
  return {
    'gen_ai.provider.name': providerOf(reply.model),
    'gen_ai.request.model': requestModelOf(reply),
    'gen_ai.agent.id': reply.agent.id,
    'gen_ai.agent.name': reply.agent.name,
    'gen_ai.conversation.id': reply.conversationId,
    'parley.workspace.id': reply.workspaceId,
  };
}

/**
 * `invoke_agent {agent name}` (INTERNAL: the agent runs in this process): one reply, from the
 * request's lease to its last step. `inReplyTo` is the message it answers (`parley.reply.in_reply_to`).
 */
export function invokeAgentSpan(reply: ReplyTrace, inReplyTo: string | null): SpanStart {
  return [
    `invoke_agent ${reply.agent.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        ...common(reply),
        ...(inReplyTo !== null && { 'parley.reply.in_reply_to': inReplyTo }),
      },
    },
  ];
}

/**
 * `chat {model}` (CLIENT): one call of the language model — each try of a failing provider is its
 * own span. With `captureContent`, the prompt (`gen_ai.input.messages`) and the system prompt
 * (`gen_ai.system_instructions`) in the conventions' JSON message shape.
 */
export function chatSpan(
  reply: ReplyTrace,
  request: ModelRequest,
  step: { step: number; attempt: number },
  captureContent: boolean,
): SpanStart {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    ...common(reply),
    'gen_ai.output.type': 'text',
    'parley.reply.step': step.step,
    'parley.model.attempt': step.attempt,
  };
  if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
  if (request.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = request.maxTokens;
  if (captureContent) {
    attributes['gen_ai.input.messages'] = JSON.stringify(request.messages.map(inputMessage));
    if (request.system !== undefined)
      attributes['gen_ai.system_instructions'] = JSON.stringify([{ type: 'text', content: request.system }]);
  }
  return [`chat ${requestModelOf(reply)}`, { kind: SpanKind.CLIENT, attributes }];
}

/** What a model call answered, set on its `chat` span: response model, usage, finish reason and (captured) the output. */
export function recordChatResult(
  span: Span,
  result: {
    text: string;
    toolCalls: ToolCall[];
    finishReason: FinishReason | 'cancelled';
    usage: TokenUsage;
    responseModel?: string;
  },
  captureContent: boolean,
): void {
  if (result.responseModel !== undefined) span.setAttribute('gen_ai.response.model', result.responseModel);
  if (result.usage.inputTokens !== null) span.setAttribute('gen_ai.usage.input_tokens', result.usage.inputTokens);
  if (result.usage.outputTokens !== null) span.setAttribute('gen_ai.usage.output_tokens', result.usage.outputTokens);
  const finishReason = conventionalFinishReason(result.finishReason);
  span.setAttribute('gen_ai.response.finish_reasons', [finishReason]);
  if (captureContent) {
    const parts = [
      ...(result.text !== '' ? [{ type: 'text', content: result.text }] : []),
      ...result.toolCalls.map(toolCallPart),
    ];
    span.setAttribute(
      'gen_ai.output.messages',
      JSON.stringify([{ role: 'assistant', parts, finish_reason: finishReason }]),
    );
  }
}

/** How a tool is run: `webhook` (Parley calls its URL), `client` (the caller answers it). */
export type ToolKind = 'webhook' | 'client' | (string & {});

/**
 * `execute_tool {tool name}` (INTERNAL): one tool call. `gen_ai.tool.type` is `extension` for a
 * tool Parley calls out to (webhook), `function` for one the client runs. With `captureContent`,
 * `gen_ai.tool.call.arguments`.
 */
export function executeToolSpan(
  reply: Pick<ReplyTrace, 'agent' | 'conversationId'>,
  call: ToolCall,
  kind: ToolKind,
  captureContent: boolean,
): SpanStart {
  return [
    `execute_tool ${call.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': kind === 'client' ? 'function' : 'extension',
        'gen_ai.agent.id': reply.agent.id,
        'gen_ai.agent.name': reply.agent.name,
        'gen_ai.conversation.id': reply.conversationId,
        'parley.tool.kind': kind,
        ...(captureContent && { 'gen_ai.tool.call.arguments': JSON.stringify(call.arguments) }),
      },
    },
  ];
}

/** A tool call's result (JSON text), set on its span as `gen_ai.tool.call.result` when content is captured. */
export function recordToolResult(span: Span, result: string, captureContent: boolean): void {
  if (captureContent) span.setAttribute('gen_ai.tool.call.result', result);
}

/** One webhook delivery attempt: which endpoint, event and attempt. */
export interface WebhookAttemptTrace {
  workspaceId: string;
  endpointId: string;
  event: Pick<DomainEvent, 'id' | 'type'>;
  attempt: number;
  trigger: string;
}

/**
 * `webhook {event type}` (INTERNAL; the HTTP request is the undici instrumentation's CLIENT span
 * under it): one delivery attempt, with the endpoint's id (never its URL or secret), the event, the
 * attempt number and trigger. Its status and outcome are set by {@link recordWebhookOutcome}.
 */
export function webhookAttemptSpan(attempt: WebhookAttemptTrace): SpanStart {
  return [
    `webhook ${attempt.event.type}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'parley.workspace.id': attempt.workspaceId,
        'parley.webhook.endpoint.id': attempt.endpointId,
        'parley.event.id': attempt.event.id,
        'parley.event.type': attempt.event.type,
        'parley.webhook.attempt': attempt.attempt,
        'parley.webhook.trigger': attempt.trigger,
      },
    },
  ];
}

/**
 * The receiver's answer, on an attempt's span: `http.response.status_code` (none without an
 * answer) and `parley.webhook.outcome` (`delivered`, `retry_scheduled`, `given_up`,
 * `endpoint_disabled`, or `dropped` when the job was dropped unsent); an attempt that was not
 * delivered is an `ERROR` with `error.type` its status code, or `no_response`.
 */
export function recordWebhookOutcome(span: Span, status: number | null, outcome: string): void {
  if (status !== null) span.setAttribute('http.response.status_code', status);
  span.setAttribute('parley.webhook.outcome', outcome);
  if (outcome !== 'delivered' && outcome !== 'dropped')
    markFailed(span, status === null ? 'no_response' : String(status));
}

/** The conventions' finish reasons are the providers' (`stop`, `length`, `tool_calls`, `content_filter`): the AI SDK's with `_`. */
function conventionalFinishReason(reason: FinishReason | 'cancelled'): string {
  return reason.replace('-', '_');
}

function toolCallPart(call: ToolCall) {
  return { type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments };
}

/** A prompt message in the conventions' `gen_ai.input.messages` shape: `{role, parts}`. */
function inputMessage(message: PromptMessage) {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        parts: [
          ...(message.content !== '' ? [{ type: 'text', content: message.content }] : []),
          ...(message.toolCalls ?? []).map(toolCallPart),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }],
      };
    default:
      return { role: message.role, parts: [{ type: 'text', content: message.content }] };
  }
}
