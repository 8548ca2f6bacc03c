/** @module The OpenAPI 3.1 document of a Parley app, generated from what its routes describe. */
import type { Env, Hono } from 'hono';
import { generateSpecs, type GenerateSpecOptions } from 'hono-openapi';
import { createRequire } from 'node:module';
import type { OpenAPIV3_1 } from 'openapi-types';
import { componentSchemas, type CoreSchemas } from './json-schema.js';
import { TAGS } from './operation.js';
import { HEADERS } from './responses.js';

/** `@parley/http`'s version: the API changes with this package. Same path from `src/` and `dist/`. */
const VERSION = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

const DESCRIPTION = `Agents, conversations with them, the messages of each conversation and webhook endpoints, per workspace, behind bearer API keys with scopes.

- Errors under \`/api\` are \`{"error": {"code", "message", "details"?}}\`; under \`/sandbox\` they are flat: \`{"error": <status>, "message"}\`.
- Every response to an authenticated request carries the IETF \`RateLimit-Policy\` and \`RateLimit\` fields; a 429 adds \`Retry-After\`.
- Ids carry a type prefix (\`agt_\`, \`conv_\`, \`msg_\`, \`wh_\`) and sort by creation time; timestamps are ISO 8601 UTC with milliseconds; optional fields never set are \`null\`.`;

/**
 * Walks `app`'s routes (hono-openapi's `generateSpecs`) and assembles the document: each route's
 * operation comes from the `documentAndRequireScope` middleware on it; schemas, header fields and the
 * bearer scheme are shared components. Routes without a description are left out, which the
 * route-coverage test catches. Paths are relative to `app`: a host that mounts it under a prefix
 * puts that prefix in `servers`. `schemas` replaces the named schemas that depend on the core (its
 * agent model names: `agentSchemas(core.agentModels)`).
 */
export async function createOpenApiDocument<E extends Env>(
  app: Hono<E>,
  schemas: CoreSchemas = {},
): Promise<OpenAPIV3_1.Document> {
  const document = await generateSpecs(app, {
    documentation: {
      info: {
        title: 'Parley API',
        version: VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: TAGS.map((tag) => ({ ...tag })),
      security: [{ bearerAuth: [] }],
      components: {
        schemas: componentSchemas(schemas),
        headers: HEADERS,
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: `Authorization: Bearer <key>` (RFC 6750).',
          },
        },
      },
    } as GenerateSpecOptions['documentation'],
    // `/openapi.json` looks like a static file to hono-openapi, which would leave it out.
    excludeStaticFile: false,
    excludeMethods: ['OPTIONS'],
  });
  // A copy: the operations share converted schemas with every other app of the process.
  return structuredClone(document) as unknown as OpenAPIV3_1.Document;
}
