/** @module aiSdkModel: the AI SDK's mock language model driven through Parley's model port. */
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import type { ModelStreamPart } from '../ports/language-model.js';
import { aiSdkModel, isAiSdkLanguageModel } from './ai-sdk-model.js';

type LanguageModelV3StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer T> ? T : never;

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};

function streamOf(chunks: LanguageModelV3StreamPart[]) {
  return { stream: simulateReadableStream({ chunks }) };
}

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const out: ModelStreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

describe('aiSdkModel', () => {
  it('passes system, messages, temperature and max tokens, and yields deltas then finish with usage', async () => {
    const mock = new MockLanguageModelV3({
      doStream: streamOf([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        { type: 'text-delta', id: 't', delta: 'lo' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage },
      ]),
    });
    const parts = await collect(
      aiSdkModel(mock).stream({
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello?' },
          { role: 'user', content: 'Again' },
        ],
        temperature: 0.2,
        maxTokens: 3,
      }),
    );
    expect(parts).toEqual([
      { type: 'text-delta', delta: 'Hel' },
      { type: 'text-delta', delta: 'lo' },
      {
        type: 'finish',
        finishReason: 'length',
        usage: { inputTokens: 12, outputTokens: 3 },
        responseModel: 'mock-model-id',
      },
    ]);
    const call = mock.doStreamCalls[0]!;
    expect(call.temperature).toBe(0.2);
    expect(call.maxOutputTokens).toBe(3);
    expect(call.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(call.prompt[0]).toMatchObject({ role: 'system', content: 'Be brief.' });
    expect(JSON.stringify(call.prompt[3])).toContain('Again');
  });

  it("numbers the tool calls of a request, each result under its call's number, even a reused id", async () => {
    const finish = { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage };
    const mock = new MockLanguageModelV3({ doStream: streamOf([finish]) });
    const call = (id: string, city: string) => ({ id, name: 'get_weather', arguments: { city } });
    const result = (id: string, city: string) => ({
      role: 'tool' as const,
      toolCallId: id,
      toolName: 'get_weather',
      content: `"${city}"`,
    });
    const [oslo, lima] = ['call_01JDX3V5Q4M8ZP2B7C9KQ1R5TW', 'call_01JDX3V5Q4M8ZP2B7C9KQ1R5TX'];
    await collect(
      aiSdkModel(mock).stream({
        messages: [
          // Stored before Parley issued its own ids: the provider reused `call_0`.
          { role: 'assistant', content: '', toolCalls: [call('call_0', 'Paris')] },
          result('call_0', 'Paris'),
          { role: 'assistant', content: '', toolCalls: [call('call_0', 'Rome')] },
          result('call_0', 'Rome'),
          { role: 'assistant', content: '', toolCalls: [call(oslo, 'Oslo'), call(lima, 'Lima')] },
          result(lima, 'Lima'),
          result(oslo, 'Oslo'),
        ],
      }),
    );
    const sent = mock.doStreamCalls[0]!.prompt.flatMap((message) =>
      typeof message.content === 'string'
        ? []
        : message.content.flatMap((part) => {
            if (part.type === 'tool-call') return [[part.toolCallId, (part.input as { city: string }).city]];
            return part.type === 'tool-result' ? [[part.toolCallId, part.output]] : [];
          }),
    );
    expect(sent).toEqual([
      ['call00001', 'Paris'],
      ['call00001', { type: 'json', value: 'Paris' }],
      ['call00002', 'Rome'],
      ['call00002', { type: 'json', value: 'Rome' }],
      ['call00003', 'Oslo'],
      ['call00004', 'Lima'],
      ['call00004', { type: 'json', value: 'Lima' }],
      ['call00003', { type: 'json', value: 'Oslo' }],
    ]);
  });

  it('throws a provider error instead of yielding a finish part, and does not retry', async () => {
    const mock = new MockLanguageModelV3({
      doStream: async () => {
        throw new Error('upstream 500');
      },
    });
    await expect(collect(aiSdkModel(mock).stream({ messages: [{ role: 'user', content: 'Hi' }] }))).rejects.toThrow(
      'upstream 500',
    );
    expect(mock.doStreamCalls).toHaveLength(1);
  });

  it('rejects when the signal aborts mid-stream', async () => {
    const controller = new AbortController();
    const mock = new MockLanguageModelV3({
      doStream: streamOf([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'one' },
        { type: 'text-delta', id: 't', delta: 'two' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ]),
    });
    const seen: string[] = [];
    const run = (async () => {
      for await (const part of aiSdkModel(mock).stream({
        messages: [{ role: 'user', content: 'Hi' }],
        signal: controller.signal,
      })) {
        if (part.type === 'text-delta') {
          seen.push(part.delta);
          controller.abort(new Error('stop now'));
        }
        if (part.type === 'finish') return 'finished';
      }
      return 'ended';
    })();
    await expect(run).rejects.toThrow();
    expect(seen).toEqual(['one']);
  });

  it('tells AI SDK models from Parley models', () => {
    expect(isAiSdkLanguageModel(new MockLanguageModelV3())).toBe(true);
    expect(isAiSdkLanguageModel({ stream: () => [] })).toBe(false);
    expect(isAiSdkLanguageModel('openai/gpt-4o')).toBe(false);
  });
});
