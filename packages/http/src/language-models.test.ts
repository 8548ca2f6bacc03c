/** @module MODELS end to end: config → the real openai-compatible provider → a fake Chat Completions server. */
import { aiSdkModel, type ModelStreamPart } from '@parley/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { languageModels } from './language-models.js';
import { readModelsConfig } from './models-config.js';
import { startFakeOpenAi, type FakeOpenAi } from './test-support/fake-openai.js';

let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(() => fake.close());

async function collect(parts: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const out: ModelStreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

function modelFrom(env: Record<string, string>) {
  const problems: string[] = [];
  const { models } = readModelsConfig(env, problems);
  expect(problems).toEqual([]);
  return languageModels(models);
}

describe('languageModels over a Chat Completions server', () => {
  it('streams the reply and sends system prompt, history in order, temperature, max_tokens and the key', async () => {
    fake.script([{ deltas: ['Sun', 'ny', ' today'], usage: { prompt_tokens: 42, completion_tokens: 3 } }]);
    const models = modelFrom({
      MODELS: JSON.stringify({ helper: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKeyEnv: 'HELPER_KEY' } }),
      HELPER_KEY: 'sk-test-secret',
    });
    const parts = await collect(
      aiSdkModel(models.helper!).stream({
        system: 'You are a weather bot.',
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'second' },
          { role: 'user', content: 'third' },
        ],
        temperature: 0.3,
        maxTokens: 77,
      }),
    );
    expect(parts).toEqual([
      { type: 'text-delta', delta: 'Sun' },
      { type: 'text-delta', delta: 'ny' },
      { type: 'text-delta', delta: ' today' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 42, outputTokens: 3 } },
    ]);
    const [request] = fake.requests;
    expect(request?.authorization).toBe('Bearer sk-test-secret');
    expect(request?.body).toMatchObject({ model: 'tiny-1', temperature: 0.3, max_tokens: 77, stream: true });
    expect(request?.body.messages).toEqual([
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'second' },
      { role: 'user', content: 'third' },
    ]);
  });

  it('throws on an HTTP error from the server', async () => {
    fake.script([{ status: 500 }]);
    const models = modelFrom({ MODELS: JSON.stringify({ m: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'x' } }) });
    await expect(collect(aiSdkModel(models.m!).stream({ messages: [{ role: 'user', content: 'hi' }] }))).rejects.toThrow();
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.authorization).toBeUndefined();
  });
});

describe('readModelsConfig', () => {
  const read = (env: Record<string, string>) => {
    const problems: string[] = [];
    const result = readModelsConfig(env, problems);
    return { ...result, problems };
  };
  const entry = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.2' };

  it('is empty without MODELS, with 50 context messages', () => {
    expect(read({})).toEqual({ models: {}, replyContextMessages: 50, problems: [] });
  });

  it('never puts the API key in an enumerable field or a message', () => {
    const ok = read({ MODELS: JSON.stringify({ a: { ...entry, apiKey: 'sk-inline-secret' } }) });
    expect(ok.models.a?.apiKey).toBe('sk-inline-secret');
    expect(JSON.stringify(ok.models)).not.toContain('sk-inline-secret');
    const bad = read({ MODELS: JSON.stringify({ a: { ...entry, apiKey: 'sk-inline-secret', apiKeyEnv: 'K' } }), K: 'sk-env' });
    expect(bad.problems).toEqual(['MODELS["a"]: Give apiKey or apiKeyEnv, not both.']);
    const broken = read({ MODELS: '{"a": {"apiKey": "sk-inline-secret"' });
    expect(broken.problems.join('\n')).not.toContain('sk-inline');
  });

  it('names each field problem, an unset apiKeyEnv and a bad REPLY_CONTEXT_MESSAGES', () => {
    const result = read({
      MODELS: JSON.stringify({
        a: { ...entry, provider: 'anthropic' },
        b: { ...entry, baseURL: 'ftp://x' },
        c: { ...entry, apiKeyEnv: 'MISSING_KEY' },
        d: { ...entry, extra: 1 },
      }),
      REPLY_CONTEXT_MESSAGES: '0',
    });
    expect(result.problems).toEqual([
      'MODELS["a"].provider: Expected "openai-compatible".',
      'MODELS["b"].baseURL: Expected an http:// or https:// URL.',
      'MODELS["c"].apiKeyEnv: The variable MISSING_KEY is not set.',
      'MODELS["d"].extra: Unknown field.',
      'REPLY_CONTEXT_MESSAGES: Expected an integer from 1 to 1000.',
    ]);
    expect(read({ MODELS: '[]' }).problems).toHaveLength(1);
    expect(read({ REPLY_CONTEXT_MESSAGES: '200' }).replyContextMessages).toBe(200);
  });
});
