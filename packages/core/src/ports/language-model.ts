/** @module The language model port: what an agent's reply is generated with (README "Agents that reply"). */

/** Who said a message of the prompt: the roles of Parley's messages. */
export type PromptRole = 'user' | 'assistant' | 'system';

/** One message of the prompt, oldest first in {@link ModelRequest.messages}. */
export interface PromptMessage {
  role: PromptRole;
  content: string;
}

/**
 * What a reply is generated from. `system` is the agent's system prompt (the system instruction),
 * absent when the agent has none; `temperature` (0–2) and `maxTokens` (the most output tokens) are
 * absent when the agent leaves them to the model's defaults.
 */
export interface ModelRequest {
  system?: string;
  messages: PromptMessage[];
  temperature?: number;
  maxTokens?: number;
  /** Aborts the generation: the stream then rejects (with the signal's reason) and stops reading. */
  signal?: AbortSignal;
}

/**
 * Why generation stopped, with the AI SDK's vocabulary: `stop` (the model ended its answer),
 * `length` (`maxTokens` reached), `content-filter`, `tool-calls`, `error`, `other`.
 */
export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** Tokens counted by the provider; `null` when it did not say. */
export interface TokenUsage {
  inputTokens: number | null;
  outputTokens: number | null;
}

/** One part of a generation: text deltas in order, then exactly one `finish`, last. */
export type ModelStreamPart =
  | { type: 'text-delta'; delta: string }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage };

/**
 * A language model as Parley uses it. Adapters (`aiSdkModel` for the AI SDK's language models, the
 * scripted model of `@parley/core/testing`) honour:
 * - `stream` yields the reply's text as deltas (concatenated in order they are the text), then one
 *   `finish` part, and completes. A provider failure (network, HTTP error, refusal) makes the
 *   iteration throw; nothing is yielded after `finish`.
 * - Aborting `request.signal` stops the generation (the provider request is cancelled) and makes the
 *   iteration throw; a consumer that stops iterating early (`break`) also releases the request.
 * - No retries inside: the reply service decides how often to try (3 times, with backoff).
 */
export interface LanguageModel {
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
