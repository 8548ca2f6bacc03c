/** @module Builds the AI SDK language models of `MODELS` (the `openai-compatible` provider). */
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelEntry } from '@parley/core';
import type { ModelConfig } from '../cli/models-config.js';

/** The AI SDK chat model of the `openai-compatible` provider (specification v3). */
type ChatModel = ReturnType<ReturnType<typeof createOpenAICompatible>['chatModel']>;

/**
 * One AI SDK language model per configured name (with its `contextWindow` when configured), each speaking the Chat Completions API at its
 * `baseURL` (OpenAI, vLLM, Ollama, LM Studio, OpenRouter…), asking for token usage in streamed
 * answers (`stream_options.include_usage`) so replies record it. An error answer that repeats the
 * configured key has it replaced by `[redacted]` before the provider's message is read, so the key
 * cannot reach a log line or a `reply.failed` (core's `modelFailure` shows that message).
 */
export function languageModels(models: Record<string, ModelConfig>): Record<string, ModelEntry> {
  const out: Record<string, ModelEntry> = {};
  for (const [name, config] of Object.entries(models)) {
    const model = lazyChatModel(config);
    out[name] = config.contextWindow === undefined ? { model } : { model, contextWindow: config.contextWindow };
  }
  return out;
}

/**
 * The model of `config`, its provider package loaded at the first request: with its schema library
 * it is about 15 MiB of resident memory and a seventh of a second at start-up, which a server
 * without `MODELS` never needs (as core loads `ai` at the first reply).
 */
function lazyChatModel(config: ModelConfig): ChatModel {
  let loaded: Promise<ChatModel> | undefined;
  const model = () =>
    (loaded ??= import('@ai-sdk/openai-compatible').then(({ createOpenAICompatible }) =>
      createOpenAICompatible({
        name: 'parley',
        baseURL: config.baseURL,
        ...(config.apiKey !== undefined && { apiKey: config.apiKey, fetch: withoutInErrors(config.apiKey) }),
        includeUsage: true,
      }).chatModel(config.model),
    ));
  return {
    specificationVersion: 'v3',
    provider: 'parley.chat',
    modelId: config.model,
    get supportedUrls() {
      return model().then((loaded) => loaded.supportedUrls);
    },
    doGenerate: async (options) => (await model()).doGenerate(options),
    doStream: async (options) => (await model()).doStream(options),
  };
}

/** `fetch` whose non-2xx answers have `secret` replaced by `[redacted]` in their body. */
function withoutInErrors(secret: string): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.ok) return response;
    const body = await response.text();
    // The body is decoded and may change length.
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    const { status, statusText } = response;
    return new Response(body.replaceAll(secret, '[redacted]'), { status, statusText, headers });
  };
}
