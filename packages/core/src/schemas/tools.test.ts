/** @module Agent tool definitions: what `configuration.tools` and `maxSteps` accept and refuse, and where the error points. */
import { describe, expect, it } from 'vitest';
import { issuePaths, rejection } from '../test-support/errors.js';
import { parse } from '../validation.js';
import { AgentCreateSchema } from './agent.js';

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  kind: 'webhook',
  url: 'https://tools.example.com/weather',
};
const body = (configuration: unknown) => ({ name: 'A', description: '', model: 'modelA-4', configuration });
const paths = async (configuration: unknown) => issuePaths(await rejection(Promise.resolve().then(() => parse(AgentCreateSchema, body(configuration)))));

describe('configuration.tools', () => {
  it('accepts webhook and client tools, maxSteps and other configuration fields, keeping them as given', () => {
    const configuration = {
      tools: [weather, { name: 'confirm', description: 'Ask the user', parameters: { type: 'object' }, kind: 'client', requiresApproval: true }],
      maxSteps: 4,
      autoReply: false,
      custom: { a: 1 },
    };
    expect(parse(AgentCreateSchema, body(configuration)).configuration).toEqual(configuration);
  });

  it.each([
    ['a name with a space', [{ ...weather, name: 'get weather' }], ['configuration.tools.0.name']],
    ['a name of 65 characters', [{ ...weather, name: 'x'.repeat(65) }], ['configuration.tools.0.name']],
    ['a missing description', [{ ...weather, description: undefined }], ['configuration.tools.0.description']],
    ['an unknown field', [{ ...weather, handler: 'x' }], ['configuration.tools.0.handler']],
    ['an unknown kind', [{ ...weather, kind: 'server' }], ['configuration.tools.0.kind']],
    ['a webhook tool without url', [{ ...weather, url: undefined }], ['configuration.tools.0.url']],
    ['a client tool with a url', [{ ...weather, kind: 'client' }], ['configuration.tools.0.url']],
    ['a url that is not http(s)', [{ ...weather, url: 'ftp://x.example.com/' }], ['configuration.tools.0.url']],
    ['a timeout above 60 s', [{ ...weather, timeoutMs: 60_001 }], ['configuration.tools.0.timeoutMs']],
    ['parameters that are not a JSON Schema', [{ ...weather, parameters: { type: 'objekt' } }], ['configuration.tools.0.parameters']],
    ['parameters of another type than object', [{ ...weather, parameters: { type: 'string' } }], ['configuration.tools.0.parameters']],
    ['parameters with a $ref to nowhere', [{ ...weather, parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } }], ['configuration.tools.0.parameters']],
    ['parameters over 16 KiB', [{ ...weather, parameters: { type: 'object', description: 'x'.repeat(16 * 1024) } }], ['configuration.tools.0.parameters']],
    ['two tools of one name', [weather, { ...weather }], ['configuration.tools']],
    ['33 tools', Array.from({ length: 33 }, (_, i) => ({ ...weather, name: `t${i}` })), ['configuration.tools']],
    ['not a list', { weather }, ['configuration.tools']],
  ])('refuses %s with 400 at the field', async (_case, tools, expected) => {
    expect(await paths({ tools })).toEqual(expected);
  });

  it('takes parameters up to 16 KiB each beyond the 16 KiB of the other configuration fields', () => {
    const big = (name: string) => ({ ...weather, name, parameters: { type: 'object', description: 'x'.repeat(15_000) } });
    expect(() => parse(AgentCreateSchema, body({ tools: [big('a'), big('b')] }))).not.toThrow();
  });

  it.each([0, 33, 2.5, '8'])('refuses maxSteps %j at configuration.maxSteps', async (maxSteps) => {
    expect(await paths({ maxSteps })).toEqual(['configuration.maxSteps']);
  });

  it('still refuses other configuration fields over 16 KiB', async () => {
    expect(await paths({ notes: 'x'.repeat(16 * 1024) })).toEqual(['configuration']);
  });

  it('takes toolsSecret beside configuration, never inside it', async () => {
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(parse(AgentCreateSchema, { ...body({ tools: [weather] }), toolsSecret: secret }).toolsSecret).toBe(secret);
    expect(issuePaths(await rejection(Promise.resolve().then(() => parse(AgentCreateSchema, { ...body({}), toolsSecret: 'short' }))))).toEqual(['toolsSecret']);
  });
});
