/**
 * @module A prompt that fits the model (docs/replies-and-streams.md#context-that-fits-the-model): the
 * system prompt, the tools and the newest whole turns of the conversation within the model's
 * context window less what is kept for the reply, counted in tokens. Pure: the tokenizer is given
 * (the reply service gives the o200k encoding, `token-count.ts`).
 */
import type { ModelTool, PromptMessage } from '../ports/language-model.js';
import type { ReplyContext } from '../types.js';

/** A model's context window when its configuration does not say, in tokens. */
export const DEFAULT_CONTEXT_WINDOW = 8_192;

/** Counts the tokens of a text. */
export type CountTokens = (text: string) => number;

/** What a reply's prompt held, as `metadata.reply.context` records it and `context.trimmed` sends it. */
export type ContextReport = ReplyContext;

/** What {@link fitContext} decided: the prompt's messages and its report, or why no prompt fits. */
export type FittedContext =
  | { fits: true; messages: PromptMessage[]; context: ContextReport }
  /** Even the newest turn with the system prompt and tools takes `tokens`, more than `budget`. */
  | { fits: false; tokens: number; budget: number };

/**
 * Tokens a message takes besides its text: the role and the delimiters chat formats wrap each
 * message in (OpenAI counts 3 per message and 1 for the role; other formats are close).
 */
const PER_MESSAGE = 4;
/** Tokens of one tool call (its id, type and delimiters) besides its name and arguments. */
const PER_CALL = 4;
/** Tokens of one tool definition besides its JSON, and the tokens priming the reply. */
const PER_TOOL = 4;
const PRIMING = 3;

/**
 * The tokens a prompt may take: `contextWindow` less what is kept for the reply — the agent's
 * `maxTokens`, or when it sets none a quarter of the window, at most 4 096 tokens (the provider
 * would otherwise be left no room to answer).
 */
export function promptBudget(contextWindow: number, maxTokens: number | null): number {
  const reserved = maxTokens ?? Math.min(4_096, Math.floor(contextWindow / 4));
  return contextWindow - reserved;
}

/**
 * Fits `messages` (a prompt as `promptMessages` builds it, oldest first) into `budget` tokens with
 * `system` and `tools`: whole turns are dropped oldest first until the rest fits. A turn is a
 * `user` message and every message after it up to the next `user` message (messages before the
 * first `user` message are one turn too); so an assistant's tool calls and their results, which
 * follow it, are kept or dropped together. The newest turn is always kept, and the turns kept are
 * the newest ones in a row (an older turn is never kept in place of a newer one that did not fit).
 * When the newest turn alone does not fit, nothing does: `{fits: false}` says by how much.
 */
export function fitContext(input: {
  system?: string | undefined;
  tools?: readonly ModelTool[] | undefined;
  messages: readonly PromptMessage[];
  budget: number;
  count: CountTokens;
}): FittedContext {
  const { messages, budget, count } = input;
  let fixed = PRIMING + (input.system === undefined ? 0 : count(input.system) + PER_MESSAGE);
  for (const tool of input.tools ?? []) fixed += count(JSON.stringify(tool)) + PER_TOOL;
  const turns = splitTurns(messages);
  let tokens = fixed;
  let kept = 0;
  for (let index = turns.length - 1; index >= 0; index -= 1) {
    const turn = turns[index]!;
    const cost = turn.reduce((sum, message) => sum + messageTokens(message, count), 0);
    const newest = index === turns.length - 1;
    if (tokens + cost > budget) {
      if (newest) return { fits: false, tokens: tokens + cost, budget };
      break;
    }
    tokens += cost;
    kept += turn.length;
  }
  const sent = messages.slice(messages.length - kept);
  return { fits: true, messages: sent, context: { messages: sent.length, tokens, trimmed: messages.length - kept } };
}

/** The estimated tokens of one prompt message. */
export function messageTokens(message: PromptMessage, count: CountTokens): number {
  let tokens = PER_MESSAGE + count(message.content);
  if (message.role === 'assistant')
    for (const call of message.toolCalls ?? [])
      tokens += PER_CALL + count(call.name) + count(JSON.stringify(call.arguments));
  if (message.role === 'tool') tokens += count(message.toolName);
  return tokens;
}

/**
 * `messages` cut before each `user` message, except one that comes between an assistant's tool
 * calls and their results (never the case in a prompt built by `promptMessages`, where results
 * follow their call at once; kept as a guarantee): a call and its results share a turn.
 */
function splitTurns(messages: readonly PromptMessage[]): PromptMessage[][] {
  const turns: PromptMessage[][] = [[]];
  const awaited = new Set<string>();
  for (const message of messages) {
    if (message.role === 'user') {
      if (awaited.size === 0 && turns.at(-1)!.length > 0) turns.push([]);
      // Calls whose results never came (not in a prompt) hold at most this one message.
      awaited.clear();
    }
    turns.at(-1)!.push(message);
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) awaited.add(call.id);
    if (message.role === 'tool') awaited.delete(message.toolCallId);
  }
  return turns.filter((turn) => turn.length > 0);
}
