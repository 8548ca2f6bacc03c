/** @module The sandbox part of the document against the published plants-openapi.json (docs/sandbox.md). */
import { readFileSync } from 'node:fs';
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { harness } from '../../test-support/harness.js';
import { fetchDocument, operation, schemaValidator, type Document } from '../../test-support/openapi.js';

const spec = JSON.parse(
  readFileSync(new URL('../../sandbox/plants-openapi.json', import.meta.url), 'utf8'),
) as Document;
const specOperations = Object.entries(spec.paths ?? {}).flatMap(([path, item]) =>
  (['get', 'post', 'delete'] as const).filter((method) => item?.[method]).map((method) => [method, path] as const),
);

type Param = OpenAPIV3_1.ParameterObject & { schema: OpenAPIV3_1.SchemaObject };
const paramSummary = (op: OpenAPIV3_1.OperationObject) =>
  ((op.parameters ?? []) as Param[]).map((p) => ({
    name: p.name,
    in: p.in,
    required: p.required ?? false,
    type: p.schema.type,
    format: p.schema.format,
  }));
const jsonSchema = (response: unknown) =>
  (response as OpenAPIV3_1.ResponseObject).content?.['application/json']?.schema;

describe('the sandbox in /openapi.json', () => {
  it('has every operation of plants-openapi.json under /sandbox, with its parameters, body and responses', async () => {
    const document = await fetchDocument((await harness()).app);
    expect(specOperations).toHaveLength(3);
    for (const [method, path] of specOperations) {
      const published = operation(spec, method, path);
      const ours = operation(document, method, `/sandbox${path}`);
      const name = `${method} ${path}`;
      expect(paramSummary(ours), name).toEqual(paramSummary(published));
      expect(ours.requestBody, name).toEqual(
        published.requestBody && {
          required: true,
          content: { 'application/json': { schema: jsonSchema(published.requestBody) } },
        },
      );
      for (const [status, response] of Object.entries(published.responses ?? {})) {
        const mine = ours.responses?.[status] as OpenAPIV3_1.ResponseObject | undefined;
        expect(mine, `${name} ${status}`).toBeDefined();
        expect(jsonSchema(mine), `${name} ${status}`).toEqual(jsonSchema(response));
        if (status < '300') expect(mine!.description, name).toBe((response as OpenAPIV3_1.ResponseObject).description);
      }
      expect(ours.security, name).toEqual(spec.security);
    }
    expect(document.components?.securitySchemes?.bearerAuth).toEqual(
      expect.objectContaining(spec.components?.securitySchemes?.bearerAuth),
    );
  });

  it('keeps the Plant and flat Error schemas as published', async () => {
    const document = await fetchDocument((await harness()).app);
    expect(document.components?.schemas?.Plant).toEqual(spec.components?.schemas?.Plant);
    expect(document.components?.schemas?.Error).toEqual(spec.components?.schemas?.Error);
  });

  it('accepts the NewPlant bodies the published schema accepts, only stricter on limits and unknown fields', async () => {
    const document = await fetchDocument((await harness()).app);
    const [ours, published] = [schemaValidator(document), schemaValidator(spec)];
    const newPlant = { $ref: '#/components/schemas/NewPlant' };
    const agree = [
      { id: 1, name: 'Fern' },
      { id: 7, name: 'Fern', tag: 'fern' },
      { name: 'Fern' },
      { id: 1 },
      { id: 'one', name: 'Fern' },
      { id: 1.5, name: 'Fern' },
      { id: 1, name: 2 },
    ];
    for (const body of agree)
      expect(ours(newPlant, body).length === 0, JSON.stringify(body)).toBe(published(newPlant, body).length === 0);
    // Parley's NewPlant is the schema that validates: ids from 1, names 1–256 characters, no unknown fields.
    for (const body of [
      { id: 0, name: 'Fern' },
      { id: 1, name: '' },
      { id: 1, name: 'Fern', colour: 'green' },
    ]) {
      expect(published(newPlant, body), JSON.stringify(body)).toEqual([]);
      expect(ours(newPlant, body), JSON.stringify(body)).not.toEqual([]);
    }
  });
});
