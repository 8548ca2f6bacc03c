/** @module A language model that answers from a script: replies without a provider, in tests. */
import type {
  FinishReason,
  LanguageModel,
  ModelRequest,
  ModelStreamPart,
  TokenUsage,
} from '../ports/language-model.js';
import type { ToolCall } from '../types.js';

/**
 * One scripted generation: `deltas` are yielded in order, then the finish part (`stop`, usage
 * `{inputTokens: 10, outputTokens: deltas.length}` unless given). `error` makes the generation throw
 * (after `deltas`, when both are given). `hold` is awaited before the first delta, so a test can
 * keep a generation in flight (and abort it through the request's signal meanwhile). `toolCalls`
 * are yielded after the deltas (each as one argument delta, then the call), and make the default
 * finish reason `tool-calls`.
 */
export interface ScriptedTurn {
  deltas?: readonly string[];
  toolCalls?: readonly ToolCall[];
  finishReason?: FinishReason;
  usage?: TokenUsage;
  error?: Error;
  hold?: Promise<unknown>;
}

/** A {@link LanguageModel} that plays {@link ScriptedTurn}s and keeps every request it received. */
export interface ScriptedModel extends LanguageModel {
  /** Every request received, oldest first (without its signal). */
  readonly requests: Array<Omit<ModelRequest, 'signal'>>;
}

/**
 * A model that answers each generation with the next turn of `turns` (the last turn repeats once
 * the script is used up), or with `turns(request, index)` when a function is given.
 */
export function scriptedModel(
  turns: readonly ScriptedTurn[] | ((request: ModelRequest, index: number) => ScriptedTurn),
): ScriptedModel {
  const requests: Array<Omit<ModelRequest, 'signal'>> = [];
  return {
    requests,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
      const { signal, ...recorded } = request;
      const index = requests.push(structuredClone(recorded)) - 1;
      const turn = typeof turns === 'function' ? turns(request, index) : turns[Math.min(index, turns.length - 1)];
      if (!turn) throw new Error('scriptedModel: the script has no turns.');
      if (turn.hold) await abortable(turn.hold, signal);
      for (const delta of turn.deltas ?? []) {
        signal?.throwIfAborted();
        yield { type: 'text-delta', delta };
      }
      for (const toolCall of turn.toolCalls ?? []) {
        yield {
          type: 'tool-call-delta',
          toolCallId: toolCall.id,
          toolName: toolCall.name,
          argumentsDelta: JSON.stringify(toolCall.arguments),
        };
        yield { type: 'tool-call', toolCall: structuredClone(toolCall) };
      }
      signal?.throwIfAborted();
      if (turn.error) throw turn.error;
      yield {
        type: 'finish',
        finishReason: turn.finishReason ?? (turn.toolCalls?.length ? 'tool-calls' : 'stop'),
        usage: turn.usage ?? { inputTokens: 10, outputTokens: turn.deltas?.length ?? 0 },
      };
    },
  };
}

function abortable(promise: Promise<unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
