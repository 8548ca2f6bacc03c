/** @module GET /openapi.json: valid OpenAPI 3.1 covering exactly the app's routes, with docs/errors.md's errors and §7's headers. */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore } from '@parley/core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Hono } from 'hono';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { harness } from '../../test-support/harness.js';
import { fetchDocument, operation, operationsOf, routesOf, type Document } from '../../test-support/openapi.js';

type Responses = Record<string, OpenAPIV3_1.ResponseObject>;

function each(document: Document): Array<[string, OpenAPIV3_1.OperationObject]> {
  return operationsOf(document).map((name) => {
    const [method, path] = name.split(' ') as [string, string];
    return [name, operation(document, method, path)];
  });
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without an API key', async () => {
    const h = await harness();
    const response = await h.call('GET', '/openapi.json', { key: null });
    expect(response.status).toBe(200);
    const document = (await response.json()) as Document;
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const ids = each(document).map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the validator rejects a broken document (so the test above can fail)', async () => {
    const document = await fetchDocument((await harness()).app);
    const broken = structuredClone(document) as unknown as {
      paths: Record<string, Record<string, { responses: unknown }>>;
    };
    broken.paths['/api/agents']!.get!.responses = 'none';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  /** The items that pass `test`, and the others. */
  const partition = <T>(items: T[], test: (item: T) => boolean): [T[], T[]] => [
    items.filter(test),
    items.filter((item) => !test(item)),
  ];

  it("documents every route the app registers (method and path), and nothing else — the reference page's script is an asset, not an operation", async () => {
    const { app } = await harness();
    const [assets, routes] = partition(routesOf(app), (route) => route.includes(' /docs/assets/'));
    expect(assets).toEqual(['GET /docs/assets/scalar-api-reference.js']);
    expect(routes).toContain('GET /api/conversations/{id}/messages');
    expect(routes).toContain('DELETE /sandbox/plants/{id}');
    expect(routes.length).toBeGreaterThanOrEqual(24);
    expect(operationsOf(await fetchDocument(app))).toEqual(routes);
  });

  it('misses a route registered without documentAndRequireScope, which the comparison above reports', async () => {
    const core = createCore(memoryAdapters());
    const app = createApp(core, { logLevel: 'silent' });
    app.get('/api/undocumented', (c) => c.text('hi'));
    const documented = operationsOf(await fetchDocument(app));
    expect(routesOf(app).filter((route) => !documented.includes(route) && !route.includes(' /docs/assets/'))).toEqual([
      'GET /api/undocumented',
    ]);
  });

  it('gives every authenticated operation the bearer scheme, docs/errors.md errors and §7 rate-limit headers', async () => {
    const document = await fetchDocument((await harness()).app);
    expect(document.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [name, op] of each(document)) {
      const responses = op.responses as Responses;
      const statuses = Object.keys(responses);
      const open = ['/healthz', '/readyz', '/openapi.json', '/docs'].some(
        (path) => name.endsWith(` ${path}`) || name.includes(' /docs/'),
      );
      if (open) {
        expect(op.security, name).toEqual([]);
        continue;
      }
      expect(op.security, name).toEqual([{ bearerAuth: [] }]);
      // GET /api/key needs a key but no scope: it is never 403.
      const noScope = name === 'GET /api/key';
      expect(statuses, name).toEqual(expect.arrayContaining(['401', ...(noScope ? [] : ['403']), '429', '500']));
      if (noScope) expect(statuses, name).not.toContain('403');
      const errorSchema = name.includes(' /sandbox/') ? '#/components/schemas/Error' : '#/components/schemas/ApiError';
      for (const [status, response] of Object.entries(responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect(headers, `${name} ${status}`).toContain('X-Request-Id');
        if (status === '401') {
          expect(headers, `${name} 401`).toContain('WWW-Authenticate');
          expect(headers, `${name} 401 is not counted`).not.toContain('RateLimit');
        } else {
          expect(headers, `${name} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Policy', 'RateLimit']));
        }
        if (status === '429') expect(headers, name).toContain('Retry-After');
        if (Number(status) >= 400)
          expect(response.content?.['application/json']?.schema, `${name} ${status}`).toEqual({ $ref: errorSchema });
      }
      if (op.requestBody) expect(statuses, name).toEqual(expect.arrayContaining(['400', '413', '415']));
      if (/\{id\}/.test(name)) expect(statuses, name).toContain('404');
    }
    for (const name of ['RateLimit-Policy', 'RateLimit', 'Retry-After'])
      expect(document.components?.headers?.[name]).toBeDefined();
  });

  it('documents request bodies, path parameters and every query field from the schemas', async () => {
    const document = await fetchDocument((await harness()).app);
    const names = (op: OpenAPIV3_1.OperationObject) =>
      (op.parameters as OpenAPIV3_1.ParameterObject[] | undefined)?.map((p) => `${p.in}:${p.name}`);
    expect(names(operation(document, 'GET', '/api/agents'))).toEqual(['query:page', 'query:limit', 'query:status']);
    expect(names(operation(document, 'GET', '/api/conversations'))).toEqual([
      'query:page',
      'query:limit',
      'query:agentId',
      'query:userId',
      'query:status',
    ]);
    expect(names(operation(document, 'GET', '/api/conversations/{id}/messages'))).toEqual([
      'path:id',
      'query:limit',
      'query:before',
      'query:after',
    ]);
    for (const [name, op] of each(document)) {
      for (const [, param] of name.matchAll(/\{(\w+)\}/g)) expect(names(op), name).toContain(`path:${param}`);
    }
    const limit = (operation(document, 'GET', '/api/agents').parameters as OpenAPIV3_1.ParameterObject[])[1]!;
    expect(limit.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(operation(document, 'POST', '/api/agents').requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/AgentCreate' } } },
    });
    const agentCreate = document.components?.schemas?.AgentCreate as OpenAPIV3_1.SchemaObject;
    expect(agentCreate.required).toEqual(['name', 'description', 'model']);
    expect(agentCreate.additionalProperties).toBe(false);
    // Nullable fields as type arrays, the OpenAPI 3.1 form renderers and generators expect.
    const agent = document.components?.schemas?.Agent as OpenAPIV3_1.SchemaObject;
    expect(agent.properties?.systemPrompt).toEqual({ type: ['string', 'null'] });
    expect(agent.properties?.maxTokens).toEqual({ type: ['integer', 'null'] });
  });

  it('names the prefix a host mounts the app under in `servers`', async () => {
    const app = createApp(createCore(memoryAdapters()), { logLevel: 'silent' });
    expect((await fetchDocument(app)).servers).toEqual([{ url: '/', description: 'This server' }]);
    const host = new Hono().route('/agents-api', app);
    const mounted = await fetchDocument(host, '/agents-api/openapi.json');
    expect(mounted.servers).toEqual([{ url: '/agents-api', description: 'This server' }]);
    expect(Object.keys(mounted.paths ?? {})).toContain('/api/agents');
  });

  it('is not served with `docs: false`', async () => {
    const app = createApp(createCore(memoryAdapters()), { logLevel: 'silent', docs: false });
    expect((await app.request('/openapi.json')).status).toBe(404);
    expect((await app.request('/docs')).status).toBe(404);
  });
});
