/** @module The context budget (context-budget.ts) with the real o200k tokenizer. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { PromptMessage } from '../ports/language-model.js';
import {
  DEFAULT_CONTEXT_WINDOW,
  fitContext,
  messageTokens,
  promptBudget,
  type CountTokens,
  type FittedContext,
} from './context-budget.js';
import { o200kCounter } from './token-count.js';

let count: CountTokens;
beforeAll(async () => {
  count = await o200kCounter();
});

const user = (content: string): PromptMessage => ({ role: 'user', content });
const assistant = (content: string): PromptMessage => ({ role: 'assistant', content });
const words = (n: number, word = 'word') => Array.from({ length: n }, () => word).join(' ');
/** A user message and its answer, each of about `size` tokens. */
const turn = (label: string, size = 20): PromptMessage[] => [
  user(`${label}: ${words(size)}`),
  assistant(`${label} answered: ${words(size)}`),
];
const cost = (messages: readonly PromptMessage[]) => messages.reduce((sum, m) => sum + messageTokens(m, count), 0);
const kept = (result: FittedContext) => {
  if (!result.fits) throw new Error(`expected a fit, got ${JSON.stringify(result)}`);
  return result;
};

describe('the context budget', () => {
  it('counts with the o200k encoding, special-token look-alikes as plain text', () => {
    expect(count('Hello, world!')).toBe(4);
    expect(count('<|endoftext|> hi')).toBeGreaterThan(2);
    expect(DEFAULT_CONTEXT_WINDOW).toBe(8_192);
  });

  it('keeps everything that fits, and reports it', () => {
    const messages = [...turn('a'), ...turn('b')];
    const result = kept(fitContext({ system: 'Be terse.', messages, budget: 10_000, count }));
    expect(result.messages).toEqual(messages);
    const system = count('Be terse.') + 4;
    expect(result.context).toEqual({ messages: 4, tokens: 3 + system + cost(messages), trimmed: 0 });
  });

  it('drops whole oldest turns until the rest fits, the newest ones in a row', () => {
    const turns = [turn('a'), turn('b'), turn('c'), turn('d')];
    const messages = turns.flat();
    // Room for the last two turns, not three.
    const budget = 3 + cost(turns[2]!) + cost(turns[3]!) + cost(turns[1]!) - 1;
    const result = kept(fitContext({ messages, budget, count }));
    expect(result.messages).toEqual([...turns[2]!, ...turns[3]!]);
    expect(result.context).toMatchObject({ messages: 4, trimmed: 4 });
    expect(result.context.tokens).toBeLessThanOrEqual(budget);
    // A big turn in the middle is not skipped over to keep older, smaller ones.
    const big = turn('big', 2_000);
    const gapped = kept(fitContext({ messages: [...turn('old'), ...big, ...turn('new')], budget: 500, count }));
    expect(gapped.messages).toEqual(turn('new'));
  });

  it('drops messages before the first user message with the oldest turn', () => {
    const greeting = assistant(`Hello! ${words(50)}`);
    const messages = [greeting, ...turn('a'), ...turn('b')];
    const all = kept(fitContext({ messages, budget: 10_000, count }));
    expect(all.messages[0]).toEqual(greeting);
    const trimmed = kept(fitContext({ messages, budget: 3 + cost(messages) - 1, count }));
    expect(trimmed.messages).toEqual([...turn('a'), ...turn('b')]);
    expect(trimmed.context.trimmed).toBe(1);
  });

  it('keeps an assistant tool call and its results together, never a result without its call', () => {
    const calls: PromptMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_1', name: 'lookup', arguments: { q: words(30) } },
        { id: 'call_2', name: 'lookup', arguments: { q: 'short' } },
      ],
    };
    const results: PromptMessage[] = [
      { role: 'tool', toolCallId: 'call_1', toolName: 'lookup', content: JSON.stringify({ found: words(200) }) },
      { role: 'tool', toolCallId: 'call_2', toolName: 'lookup', content: '{"found":"little"}' },
    ];
    const withTools = [user('look it up'), calls, ...results, assistant('Here it is.')];
    const messages = [...turn('a'), ...withTools, ...turn('b')];
    for (let budget = cost(turn('b')) + 3; budget <= cost(messages) + 3; budget += 7) {
      const result = kept(fitContext({ messages, budget, count }));
      const sent = result.messages;
      // Every call sent has all its results right after it; every result sent has its call.
      const sentCalls = sent.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
      const sentResults = sent.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
      expect(sentResults).toEqual(sentCalls);
      expect(sent[0]?.role).toBe('user');
      expect(result.context.tokens).toBeLessThanOrEqual(budget);
    }
    // Also in a (hand-made) prompt where a user message sits between a call and its result.
    const odd = [user('q'), calls, user('meanwhile'), ...results, ...turn('z')];
    const result = kept(fitContext({ messages: odd, budget: cost(turn('z')) + cost(results) + 30, count }));
    expect(result.messages).toEqual(turn('z'));
  });

  it('always keeps the newest turn with the newest user message; too big alone, nothing fits', () => {
    const newest = turn('newest', 1_000);
    const messages = [...turn('a'), ...newest];
    const budget = 3 + cost(newest);
    expect(kept(fitContext({ messages, budget, count })).messages).toEqual(newest);
    const huge = user(words(20_000));
    const refused = fitContext({ system: 'Be terse.', messages: [...turn('a'), huge], budget: 6_144, count });
    expect(refused).toEqual({ fits: false, tokens: expect.any(Number), budget: 6_144 });
    expect(!refused.fits && refused.tokens).toBeGreaterThan(20_000);
  });

  it('counts the tools and the system prompt against the budget', () => {
    const tool = {
      name: 'lookup',
      description: words(300),
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
    };
    const messages = [...turn('a'), ...turn('b')];
    const without = kept(fitContext({ messages, budget: 3 + cost(messages), count }));
    expect(without.context.trimmed).toBe(0);
    // The same budget with the tool: room for the newest turn only.
    const toolTokens = count(JSON.stringify(tool)) + 4;
    expect(toolTokens).toBeGreaterThan(300);
    const budget = 3 + toolTokens + cost(messages) - 1;
    const withTool = kept(fitContext({ messages, tools: [tool], budget, count }));
    expect(withTool.messages).toEqual(turn('b'));
    expect(withTool.context.tokens).toBe(3 + toolTokens + cost(turn('b')));
    const system = words(400);
    expect(fitContext({ system, messages, tools: [tool], budget, count }).fits).toBe(false);
  });

  it('keeps maxTokens for the reply, or a quarter of the window (at most 4 096) when the agent sets none', () => {
    expect(promptBudget(8_192, 1_000)).toBe(7_192);
    expect(promptBudget(8_192, null)).toBe(6_144);
    expect(promptBudget(128_000, null)).toBe(123_904);
    expect(promptBudget(1_000, 2_000)).toBe(-1_000);
  });
});
