/** @module Adapts the AI SDK's language models (`ai`, any `@ai-sdk/*` provider) to Parley's model port. */
import type { LanguageModel as AiSdkModelOrId } from 'ai';
import type { FinishReason, LanguageModel, ModelRequest, ModelStreamPart, TokenUsage } from '../ports/language-model.js';

/**
 * A language model object of the AI SDK (specification v2 or v3, e.g. `createOpenAICompatible(…)(id)`
 * or `openai('gpt-4o')`). Plain model id strings are not accepted: in the AI SDK they route through
 * Vercel's gateway, which a Parley host never configured.
 */
export type AiSdkLanguageModel = Exclude<AiSdkModelOrId, string>;

const FINISH_REASONS: ReadonlySet<string> = new Set<FinishReason>(['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other']);

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
 * `maxOutputTokens`) and `signal` are passed through; the SDK's own retries are off (the reply
 * service retries) and its default error logging is off (errors are thrown to the caller, whose log
 * lines carry no content). `ai` is loaded on the first generation, so importing `@parley/core`
 * costs nothing when no model is configured.
 */
export function aiSdkModel(model: AiSdkLanguageModel): LanguageModel {
  return {
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
      const { streamText } = await import('ai');
      const result = streamText({
        model,
        ...(request.system !== undefined && { system: request.system }),
        messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
        ...(request.temperature !== undefined && { temperature: request.temperature }),
        ...(request.maxTokens !== undefined && { maxOutputTokens: request.maxTokens }),
        ...(request.signal && { abortSignal: request.signal }),
        maxRetries: 0,
        onError: () => {},
      });
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            if (part.text !== '') yield { type: 'text-delta', delta: part.text };
            break;
          case 'error':
            throw part.error;
          case 'abort':
            throw request.signal?.reason ?? new DOMException('The generation was aborted.', 'AbortError');
          case 'finish':
            yield { type: 'finish', finishReason: finishReason(part.finishReason), usage: usage(part.totalUsage) };
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
