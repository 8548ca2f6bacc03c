/** @module Test helpers for the OpenAPI document: route and operation lists, Ajv over its schemas. Not built. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Env, Hono } from 'hono';
import type { OpenAPIV3_1 } from 'openapi-types';

export type Document = OpenAPIV3_1.Document;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** `:id` → `{id}`: Hono's path parameters in OpenAPI's notation. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?\??/g, '{$1}');
}

/**
 * Every `METHOD /path` the app answers with a route of its own. `ALL` entries are middleware
 * (`use`) and the 405/404 fallbacks, not routes; a route with middleware appears once per handler.
 */
export function routesOf<E extends Env>(app: Hono<E>): string[] {
  const routes = app.routes
    .filter((route) => route.method !== 'ALL')
    .map((route) => `${route.method} ${toOpenApiPath(route.path)}`);
  return [...new Set(routes)].sort();
}

/** Every `METHOD /path` the document describes. */
export function operationsOf(document: Document): string[] {
  const operations: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) if (item?.[method]) operations.push(`${method.toUpperCase()} ${path}`);
  }
  return operations.sort();
}

/** The operation object of `METHOD /path`, failing loudly when it is missing. */
export function operation(document: Document, method: string, path: string): OpenAPIV3_1.OperationObject {
  const found = document.paths?.[path]?.[method.toLowerCase() as (typeof METHODS)[number]];
  if (!found) throw new Error(`The document has no ${method} ${path}.`);
  return found;
}

/** The document as the app serves it. */
export async function fetchDocument<E extends Env>(app: Hono<E>, path = '/openapi.json'): Promise<Document> {
  const response = await app.request(path);
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}.`);
  return (await response.json()) as Document;
}

// ajv-formats is CommonJS with a default export that NodeNext sees as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) over the document's component schemas:
 * `validate(schema, value)` returns the failures, `[]` when `value` satisfies `schema`.
 */
export function schemaValidator(document: Document): (schema: object, value: unknown) => string[] {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  // Registered under an id so `#/components/schemas/…` references resolve against the document.
  ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
  return (schema, value) => {
    const rewritten = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
    ) as object;
    const validate = ajv.compile(rewritten);
    return validate(value)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
  };
}
