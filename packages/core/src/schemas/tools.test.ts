/**
 * @module Agent settings: what the top-level `tools`, `maxSteps` and `autoReply` accept and refuse,
 * and where the error points.
 */
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
const body = (settings: Record<string, unknown>) => ({ name: 'A', description: '', model: 'modelA-4', ...settings });
const paths = async (settings: Record<string, unknown>) =>
  issuePaths(await rejection(Promise.resolve().then(() => parse(AgentCreateSchema, body(settings)))));

describe('agent tools, maxSteps and autoReply', () => {
  it('accepts webhook and client tools, maxSteps and autoReply as given, beside a configuration of any keys', () => {
    const confirm = { name: 'confirm', description: 'Ask', parameters: { type: 'object' }, kind: 'client' };
    const settings = {
      tools: [weather, { ...confirm, requiresApproval: true }],
      maxSteps: 4,
      autoReply: false,
      configuration: { tools: ['search'], maxSteps: 'many', custom: { a: 1 } },
    };
    expect(parse(AgentCreateSchema, body(settings))).toEqual(body(settings));
  });

  it.each([
    ['a name with a space', [{ ...weather, name: 'get weather' }], ['tools.0.name']],
    ['a name of 65 characters', [{ ...weather, name: 'x'.repeat(65) }], ['tools.0.name']],
    ['a missing description', [{ ...weather, description: undefined }], ['tools.0.description']],
    ['an unknown field', [{ ...weather, handler: 'x' }], ['tools.0.handler']],
    ['an unknown kind', [{ ...weather, kind: 'server' }], ['tools.0.kind']],
    ['a webhook tool without url', [{ ...weather, url: undefined }], ['tools.0.url']],
    ['a client tool with a url', [{ ...weather, kind: 'client' }], ['tools.0.url']],
    ['a url that is not http(s)', [{ ...weather, url: 'ftp://x.example.com/' }], ['tools.0.url']],
    ['a timeout above 60 s', [{ ...weather, timeoutMs: 60_001 }], ['tools.0.timeoutMs']],
    ['parameters that are not a JSON Schema', [{ ...weather, parameters: { type: 'objekt' } }], ['tools.0.parameters']],
    [
      'parameters of another type than object',
      [{ ...weather, parameters: { type: 'string' } }],
      ['tools.0.parameters'],
    ],
    [
      'parameters with a $ref to nowhere',
      [{ ...weather, parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } }],
      ['tools.0.parameters'],
    ],
    [
      'parameters over 16 KiB',
      [{ ...weather, parameters: { type: 'object', description: 'x'.repeat(16 * 1024) } }],
      ['tools.0.parameters'],
    ],
    ['two tools of one name', [weather, { ...weather }], ['tools']],
    ['33 tools', Array.from({ length: 33 }, (_, i) => ({ ...weather, name: `t${i}` })), ['tools']],
    ['not a list', { weather }, ['tools']],
  ])('refuses %s with 400 at the field', async (_case, tools, expected) => {
    expect(await paths({ tools })).toEqual(expected);
  });

  it('takes parameters up to 16 KiB each, more than the 16 KiB of a configuration in all', () => {
    const big = (name: string) => ({
      ...weather,
      name,
      parameters: { type: 'object', description: 'x'.repeat(15_000) },
    });
    expect(() => parse(AgentCreateSchema, body({ tools: [big('a'), big('b')] }))).not.toThrow();
  });

  it.each([0, 33, 2.5, '8', null])('refuses maxSteps %j at maxSteps', async (maxSteps) => {
    expect(await paths({ maxSteps })).toEqual(['maxSteps']);
  });

  it.each(['false', 0, null])('refuses autoReply %j at autoReply', async (autoReply) => {
    expect(await paths({ autoReply })).toEqual(['autoReply']);
  });

  it('still refuses a configuration over 16 KiB, whatever its keys are named', async () => {
    expect(await paths({ configuration: { tools: 'x'.repeat(16 * 1024) } })).toEqual(['configuration']);
  });

  it('takes toolsSecret beside the tools', async () => {
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(parse(AgentCreateSchema, body({ tools: [weather], toolsSecret: secret })).toolsSecret).toBe(secret);
    expect(await paths({ toolsSecret: 'short' })).toEqual(['toolsSecret']);
  });
});
