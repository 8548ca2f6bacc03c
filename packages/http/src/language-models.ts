/** @module Builds the AI SDK language models of `MODELS` (the `openai-compatible` provider). */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AiSdkLanguageModel } from '@parley/core';
import type { ModelConfig } from './models-config.js';

/**
 * One AI SDK language model per configured name, each speaking the Chat Completions API at its
 * `baseURL` (OpenAI, vLLM, Ollama, LM Studio, OpenRouter…), asking for token usage in streamed
 * answers (`stream_options.include_usage`) so replies record it.
 */
export function languageModels(models: Record<string, ModelConfig>): Record<string, AiSdkLanguageModel> {
  const out: Record<string, AiSdkLanguageModel> = {};
  for (const [name, config] of Object.entries(models)) {
    const provider = createOpenAICompatible({
      name: 'parley',
      baseURL: config.baseURL,
      ...(config.apiKey !== undefined && { apiKey: config.apiKey }),
      includeUsage: true,
    });
    out[name] = provider.chatModel(config.model);
  }
  return out;
}
