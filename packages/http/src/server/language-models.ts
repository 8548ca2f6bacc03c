/** @module Builds the AI SDK language models of `MODELS` (the `openai-compatible` provider). */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelEntry } from '@parley/core';
import type { ModelConfig } from '../cli/models-config.js';

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
    const provider = createOpenAICompatible({
      name: 'parley',
      baseURL: config.baseURL,
      ...(config.apiKey !== undefined && { apiKey: config.apiKey, fetch: withoutInErrors(config.apiKey) }),
      includeUsage: true,
    });
    const model = provider.chatModel(config.model);
    out[name] = config.contextWindow === undefined ? { model } : { model, contextWindow: config.contextWindow };
  }
  return out;
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
