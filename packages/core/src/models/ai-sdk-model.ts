/** @module Adapts the AI SDK's language models (`ai`, any `@ai-sdk/*` provider) to Parley's model port. */
import type { LanguageModel as AiSdkModelOrId } from 'ai';
import type { ModelMessage, ToolSet } from 'ai';
import type {
  FinishReason,
  LanguageModel,
  ModelRequest,
  ModelStreamPart,
  PromptMessage,
  TokenUsage,
} from '../ports/language-model.js';
import type { JsonObject } from '../types.js';

/**
 * A language model object of the AI SDK (specification v2 or v3, e.g. `createOpenAICompatible(…)(id)`
 * or `openai('gpt-4o')`). Plain model id strings are not accepted: in the AI SDK they route through
 * Vercel's gateway, which a Parley host never configured.
 */
export type AiSdkLanguageModel = Exclude<AiSdkModelOrId, string>;

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>([
  'stop',
  'length',
  'content-filter',
  'tool-calls',
  'error',
  'other',
]);

/** True when `model` is an AI SDK language model object rather than a Parley {@link LanguageModel}. */
export function isAiSdkLanguageModel(model: unknown): model is AiSdkLanguageModel {
  return (
    typeof model === 'object' &&
    model !== null &&
    'specificationVersion' in model &&
    typeof (model as { doStream?: unknown }).doStream === 'function'
  );
}

/**
 * Wraps an AI SDK language model as a Parley {@link LanguageModel}, generating with the AI SDK's
 * `streamText`: the request's `system`, `messages`, `temperature`, `maxTokens` (as
 * `maxOutputTokens`) and `signal` are passed through (the history's tool call ids numbered per
 * request, see `modelMessages`); the SDK's own retries are off (the reply service retries) and its
 * default error logging is off (errors are thrown to the caller, whose log lines carry no content).
 * `ai` is loaded on the first generation, so importing `@parley/core` costs nothing when no model
 * is configured.
 */
export function aiSdkModel(model: AiSdkLanguageModel): LanguageModel {
  return {
    // `openai.chat`, `ollama.chat`: the provider's name is the part before the dot.
    provider: model.provider.split('.')[0]!,
    modelId: model.modelId,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
      const { streamText, jsonSchema } = await import('ai');
      // Tools without `execute`: the SDK stops after one step and hands the calls over (Parley runs them).
      const tools: ToolSet | undefined = request.tools?.length
        ? Object.fromEntries(
            request.tools.map((tool) => [
              tool.name,
              { description: tool.description, inputSchema: jsonSchema(tool.parameters) },
            ]),
          )
        : undefined;
      const result = streamText({
        model,
        ...(request.system !== undefined && { system: request.system }),
        messages: modelMessages(request.messages),
        ...(tools && { tools }),
        ...(request.temperature !== undefined && { temperature: request.temperature }),
        ...(request.maxTokens !== undefined && { maxOutputTokens: request.maxTokens }),
        ...(request.signal && { abortSignal: request.signal }),
        maxRetries: 0,
        onError: () => {},
      });
      const names = new Map<string, string>();
      let responseModel: string | undefined;
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            if (part.text !== '') yield { type: 'text-delta', delta: part.text };
            break;
          case 'tool-input-start':
            names.set(part.id, part.toolName);
            break;
          case 'tool-input-delta':
            if (part.delta !== '')
              yield {
                type: 'tool-call-delta',
                toolCallId: part.id,
                toolName: names.get(part.id) ?? '',
                argumentsDelta: part.delta,
              };
            break;
          case 'tool-call':
            yield {
              type: 'tool-call',
              toolCall: { id: part.toolCallId, name: part.toolName, arguments: argumentsObject(part.input) },
            };
            break;
          case 'error':
            throw part.error;
          case 'abort':
            throw request.signal?.reason ?? new DOMException('The generation was aborted.', 'AbortError');
          case 'finish-step':
            responseModel = part.response.modelId;
            break;
          case 'finish':
            yield {
              type: 'finish',
              finishReason: finishReason(part.finishReason),
              usage: usage(part.totalUsage),
              ...(responseModel && { responseModel }),
            };
            return;
          default:
            break;
        }
      }
      throw new Error('The language model stream ended without a finish part.');
    },
  };
}

function finishReason(reason: string): FinishReason {
  return FINISH_REASONS.has(reason) ? (reason as FinishReason) : 'other';
}

function usage(total: { inputTokens: number | undefined; outputTokens: number | undefined }): TokenUsage {
  return { inputTokens: total.inputTokens ?? null, outputTokens: total.outputTokens ?? null };
}

/** A call's parsed input as an object: anything else (invalid JSON the SDK kept as text) is `{}`. */
function argumentsObject(input: unknown): JsonObject {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as JsonObject) : {};
}

/**
 * The prompt as the AI SDK takes it: tool calls as `tool-call` parts, results as JSON `tool-result`
 * parts. Calls are numbered in order, `call` + 5 digits (`call00001`, …), and each result takes the
 * number of the latest call with its id (it follows its call): unique within the request, even
 * for calls stored with a reused provider id, and valid everywhere — Mistral's servers refuse any
 * id but exactly 9 letters or digits, Parley's own `call_` + a ULID among them
 * (docs/replies-and-streams.md#tools).
 */
function modelMessages(messages: readonly PromptMessage[]): ModelMessage[] {
  const wireIds = new Map<string, string>();
  let calls = 0;
  const callId = (id: string) => {
    const wire = `call${String((calls += 1)).padStart(5, '0')}`;
    wireIds.set(id, wire);
    return wire;
  };
  return messages.map((message): ModelMessage => {
    switch (message.role) {
      case 'assistant':
        if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
        return {
          role: 'assistant',
          content: [
            ...(message.content !== '' ? [{ type: 'text' as const, text: message.content }] : []),
            ...message.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: callId(call.id),
              toolName: call.name,
              input: call.arguments,
            })),
          ],
        };
      case 'tool': {
        const output = toolOutput(message.content);
        const toolCallId = wireIds.get(message.toolCallId) ?? callId(message.toolCallId);
        return { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName: message.toolName, output }] };
      }
      default:
        return { role: message.role, content: message.content };
    }
  });
}

function toolOutput(content: string): { type: 'json'; value: never } | { type: 'text'; value: string } {
  try {
    return { type: 'json', value: JSON.parse(content) as never };
  } catch {
    return { type: 'text', value: content };
  }
}
