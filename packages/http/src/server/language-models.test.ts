/** @module MODELS end to end: config → the real openai-compatible provider → a fake Chat Completions server. */
import { aiSdkModel, modelFailure, type AiSdkLanguageModel, type ModelStreamPart } from '@parley/core';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { languageModels } from './language-models.js';
import { readModelsConfig } from '../cli/models-config.js';
import { startFakeOpenAi, type FakeOpenAi } from '../test-support/fake-openai.js';

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
  const entries = Object.entries(languageModels(models));
  return Object.fromEntries(entries.map(([name, entry]) => [name, entry.model as AiSdkLanguageModel]));
}

describe('languageModels over a Chat Completions server', () => {
  it('streams the reply and sends system prompt, history in order, temperature, max_tokens and the key', async () => {
    fake.script([{ deltas: ['Sun', 'ny', ' today'], usage: { prompt_tokens: 42, completion_tokens: 3 } }]);
    const models = modelFrom({
      MODELS: JSON.stringify({
        helper: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'tiny-1', apiKeyEnv: 'HELPER_KEY' },
      }),
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
      {
        type: 'finish',
        finishReason: 'stop',
        responseModel: 'tiny-1',
        usage: { inputTokens: 42, outputTokens: 3 },
      },
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
    const models = modelFrom({
      MODELS: JSON.stringify({ m: { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'x' } }),
    });
    await expect(
      collect(aiSdkModel(models.m!).stream({ messages: [{ role: 'user', content: 'hi' }] })),
    ).rejects.toThrow();
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.authorization).toBeUndefined();
  });
});

describe('model failures as the log and reply.failed show them', () => {
  const failureOf = async (model: AiSdkLanguageModel | undefined) => {
    const asked = aiSdkModel(model!).stream({ messages: [{ role: 'user', content: 'Top secret question' }] });
    const error = await collect(asked).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    return modelFailure(error);
  };

  it("an HTTP error: its status, the host and the provider's message, with the key it repeats removed", async () => {
    const key = 'sk-parley-failure-test-0123456789';
    fake.script([{ status: 401, errorMessage: `Incorrect API key provided: ${key}. See your account.` }]);
    const entry = { provider: 'openai-compatible', baseURL: fake.baseURL, model: 'x', apiKeyEnv: 'K' };
    const models = modelFrom({ MODELS: JSON.stringify({ m: entry }), K: key });
    const failure = await failureOf(models.m);
    const host = new URL(fake.baseURL).host;
    expect(failure).toEqual({
      description: `HTTP 401 from ${host}: Incorrect API key provided: [redacted]. See your account.`,
      status: 401,
      host,
    });
    expect(JSON.stringify(failure)).not.toContain('Top secret');
  });

  it('a provider that is not listening: connection refused, with the host', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const entry = { provider: 'openai-compatible', baseURL: `http://127.0.0.1:${port}/v1`, model: 'x' };
    const models = modelFrom({ MODELS: JSON.stringify({ m: entry }) });
    expect(await failureOf(models.m)).toEqual({
      description: `connection refused (ECONNREFUSED) to 127.0.0.1:${port}`,
      host: `127.0.0.1:${port}`,
      code: 'ECONNREFUSED',
    });
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

  it("keeps a model's contextWindow and hands it to the core with the model", () => {
    const { models, problems } = read({
      MODELS: JSON.stringify({ a: { ...entry, contextWindow: 131_072 }, b: entry }),
    });
    expect(problems).toEqual([]);
    expect(models.a?.contextWindow).toBe(131_072);
    const built = languageModels(models);
    expect(built.a?.contextWindow).toBe(131_072);
    expect(built.b).not.toHaveProperty('contextWindow');
  });

  it('never puts the API key in an enumerable field or a message', () => {
    const ok = read({ MODELS: JSON.stringify({ a: { ...entry, apiKey: 'sk-inline-secret' } }) });
    expect(ok.models.a?.apiKey).toBe('sk-inline-secret');
    expect(JSON.stringify(ok.models)).not.toContain('sk-inline-secret');
    const bad = read({
      MODELS: JSON.stringify({ a: { ...entry, apiKey: 'sk-inline-secret', apiKeyEnv: 'K' } }),
      K: 'sk-env',
    });
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
        e: { ...entry, contextWindow: 0 },
        f: { ...entry, contextWindow: '8192' },
      }),
      REPLY_CONTEXT_MESSAGES: '0',
    });
    expect(result.problems).toEqual([
      'MODELS["a"].provider: Expected "openai-compatible".',
      'MODELS["b"].baseURL: Expected an http:// or https:// URL.',
      'MODELS["c"].apiKeyEnv: The variable MISSING_KEY is not set.',
      'MODELS["d"].extra: Unknown field.',
      'MODELS["e"].contextWindow: Expected an integer from 1 to 100000000 (tokens).',
      'MODELS["f"].contextWindow: Expected an integer from 1 to 100000000 (tokens).',
      'REPLY_CONTEXT_MESSAGES: Expected an integer from 1 to 1000.',
    ]);
    expect(read({ MODELS: '[]' }).problems).toHaveLength(1);
    expect(read({ REPLY_CONTEXT_MESSAGES: '200' }).replyContextMessages).toBe(200);
  });
});
