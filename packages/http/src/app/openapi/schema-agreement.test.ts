/**
 * @module The document's request schemas and core's validation agree: generated from the same
 * valibot schemas, they accept and refuse the same bodies wherever JSON Schema can say so.
 */
import { AgentCreateSchema, ConversationUpdateSchema, MessageCreateSchema, WebhookCreateSchema } from '@parley/core';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { PlantCreateSchema } from '../../sandbox/plant-schemas.js';
import { harness } from '../../test-support/harness.js';
import { fetchDocument, schemaValidator } from '../../test-support/openapi.js';

const agent = { name: 'Ada', description: 'Answers', model: 'modelA-4' };
const webhook = { url: 'https://example.com/hooks', events: ['agent.created'] };

const CASES: Array<[string, v.GenericSchema, unknown[]]> = [
  [
    'AgentCreate',
    AgentCreateSchema,
    [
      agent,
      { ...agent, temperature: 2, maxTokens: 1, systemPrompt: '', configuration: { a: { b: [1] } } },
      { ...agent, name: '' },
      { ...agent, name: 'x'.repeat(257) },
      { name: 'Ada', model: 'modelA-4' },
      { ...agent, model: 'gpt-9' },
      { ...agent, temperature: 2.5 },
      { ...agent, maxTokens: 1.5 },
      { ...agent, maxTokens: 0 },
      { ...agent, configuration: [1] },
      { ...agent, colour: 'blue' },
    ],
  ],
  [
    'MessageCreate',
    MessageCreateSchema,
    [
      { role: 'user', content: 'Hi' },
      { role: 'robot', content: 'Hi' },
      { role: 'user', content: '' },
      { role: 'user' },
    ],
  ],
  [
    'ConversationUpdate',
    ConversationUpdateSchema,
    [{}, { status: 'completed' }, { status: 'paused' }, { metadata: 'x' }],
  ],
  [
    'WebhookCreate',
    WebhookCreateSchema,
    [
      webhook,
      { ...webhook, events: [] },
      { ...webhook, events: ['agent.created', 'agent.created'] },
      { ...webhook, events: ['agent.exploded'] },
      { events: ['agent.created'] },
    ],
  ],
  [
    'NewPlant',
    PlantCreateSchema,
    [
      { id: 1, name: 'Fern' },
      { id: 0, name: 'Fern' },
      { id: 1.5, name: 'Fern' },
      { id: 1, name: 'Fern', tag: 7 },
      { id: 1 },
    ],
  ],
];

describe('request schemas in /openapi.json', () => {
  it.each(CASES)('%s accepts exactly the bodies core accepts', async (name, schema, bodies) => {
    const validate = schemaValidator(await fetchDocument((await harness()).app));
    const verdicts = bodies.map((body) => ({
      body,
      document: validate({ $ref: `#/components/schemas/${name}` }, body).length === 0,
      core: v.safeParse(schema, body).success,
    }));
    expect(verdicts.filter((verdict) => verdict.document !== verdict.core)).toEqual([]);
    // Both verdicts occur, so the cases test something.
    expect(new Set(verdicts.map((verdict) => verdict.core)).size).toBe(2);
  });
});
