/**
 * @module Counting tokens with the o200k encoding (OpenAI's GPT-4o and later; an estimate for any
 * other provider), through `gpt-tokenizer`, loaded on the first reply so importing `@parley/core`
 * costs nothing when no model is configured.
 */
import type { CountTokens } from './context-budget.js';

/** Texts whose count is kept: a reply's next step (and the next reply) counts the same history again. */
const CACHED = 1_000;

let loading: Promise<CountTokens> | undefined;

/**
 * The o200k token counter. Text that looks like a special token (`<|endoftext|>`) is counted as
 * the ordinary text it is in a message, never refused. The last {@link CACHED} counts are kept.
 */
export function o200kCounter(): Promise<CountTokens> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then(({ countTokens }) => {
    const options = { disallowedSpecial: new Set<string>() };
    const cache = new Map<string, number>();
    return (text: string) => {
      const known = cache.get(text);
      if (known !== undefined) return known;
      const counted = countTokens(text, options);
      if (cache.size >= CACHED) cache.delete(cache.keys().next().value!);
      cache.set(text, counted);
      return counted;
    };
  });
  return loading;
}
