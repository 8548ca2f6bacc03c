/** @module The language model port: what an agent's reply is generated with (README "Agents that reply"). */

import type { JsonObject, ToolCall } from '../types.js';

/** Who said a message of the prompt: the roles of Parley's messages. */
export type PromptRole = 'user' | 'assistant' | 'system' | 'tool';

/**
 * One message of the prompt, oldest first in {@link ModelRequest.messages}. An `assistant` message
 * may carry the tool calls it asked for; each is followed by one `tool` message per call, whose
 * `content` is the result as JSON text and `toolName` the called tool. Call ids here are Parley's
 * (`call_` + a ULID, or a provider's id on calls stored before Parley issued its own): an adapter
 * may send the provider other ids, the same for a call and its result within one request.
 */
export type PromptMessage =
  | { role: 'user' | 'system'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; content: string; toolCallId: string; toolName: string };

/** A tool the model may call: `parameters` is a JSON Schema (draft 2020-12) of the arguments object. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: JsonObject;
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
  /** Tools the model may ask for; the model decides, Parley runs them (no tool runs inside the model). */
  tools?: ModelTool[];
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

/**
 * One part of a generation: text deltas in order; for each tool call the model decides, deltas of
 * its arguments' JSON text (as streamed) and then the whole call (`arguments` parsed, `{}` when the
 * model sent no valid JSON object); then exactly one `finish`, last (`tool-calls` when it asked for tools).
 * Ids of tool calls here are the provider's, meaningful only within this generation (some servers
 * reuse `call_0` in every response): the reply service gives each call Parley's own id.
 */
export type ModelStreamPart =
  | { type: 'text-delta'; delta: string }
  | { type: 'tool-call-delta'; toolCallId: string; toolName: string; argumentsDelta: string }
  | { type: 'tool-call'; toolCall: ToolCall }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage; responseModel?: string };

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
  /**
   * Who serves it, for traces' `gen_ai.provider.name` (`openai`, `anthropic`, an OpenAI-compatible
   * provider's name…); absent: unknown. `aiSdkModel` takes it from the AI SDK model's `provider`.
   */
  readonly provider?: string;
  /** The provider's model id (`gpt-4o`), for traces' `gen_ai.request.model`; absent: the agent's model name. */
  readonly modelId?: string;
}
