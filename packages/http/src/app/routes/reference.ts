/**
 * @module `GET /openapi.json` and `GET /docs`: the API's OpenAPI 3.1 document and a reference
 * page for it (docs/operations.md), without authentication.
 */
import { Scalar } from '@scalar/hono-api-reference';
import { Hono, type Context, type Env } from 'hono';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { ParleyEnv } from '../env.js';
import { createOpenApiDocument } from '../openapi/document.js';
import type { CoreSchemas } from '../openapi/json-schema.js';
import { documentAndRequireScope } from '../openapi/operation.js';
import { answerWrongMethods } from './fallback.js';

/** Where the reference page's script is served, relative to the app. */
const REFERENCE_SCRIPT_PATH = '/docs/assets/scalar-api-reference.js';

/**
 * Scalar's standalone bundle. The build copies it into `dist/assets` (so the published package
 * needs neither Scalar's 700-package dependency tree nor a CDN); from the sources, before a
 * build, it comes from the development dependency.
 */
function referenceScriptFile(): string {
  const copied = fileURLToPath(new URL('../../../dist/assets/scalar-api-reference.js', import.meta.url));
  if (existsSync(copied)) return copied;
  // The package exports no path to it: it sits beside the entry point, in dist/browser.
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return join(dirname(entry), 'browser', 'standalone.js');
}

let referenceScript: Promise<Uint8Array<ArrayBuffer>> | undefined;

/** The part of the request path before `route`: where a host mounted the app ('' at the root). */
function mountPrefix(c: Context, route: string): string {
  return c.req.path.endsWith(route) ? c.req.path.slice(0, -route.length) : '';
}

/**
 * The document, the page and the page's script, documenting `app` (the app these routes are
 * mounted in, walked when the document is first asked for, so every route is registered by then).
 * Other methods on these paths are 405 `method_not_allowed`.
 */
export function referenceRoutes<E extends Env>(app: Hono<E>, schemas: CoreSchemas = {}): Hono<ParleyEnv> {
  let document: Promise<OpenAPIV3_1.Document> | undefined;
  const routes = new Hono<ParleyEnv>()
    .get(
      '/openapi.json',
      documentAndRequireScope({
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        description:
          'OpenAPI 3.1, generated from the same valibot schemas that validate requests. `servers` names the prefix the API is mounted under.',
        tag: 'Operations',
        success: {
          status: 200,
          description: 'The OpenAPI 3.1 document.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      }),
      async (c) => {
        document ??= createOpenApiDocument(app, schemas).catch((error: unknown) => {
          document = undefined;
          throw error;
        });
        const servers = [{ url: mountPrefix(c, '/openapi.json') || '/', description: 'This server' }];
        return c.json({ ...(await document), servers });
      },
    )
    .get(
      '/docs',
      documentAndRequireScope({
        operationId: 'getApiReference',
        summary: 'API reference page',
        description: 'An interactive reference for this document (Scalar), served with its script from this server.',
        tag: 'Operations',
        success: {
          status: 200,
          description: 'An HTML page.',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      }),
      // Relative URLs: the page works wherever the app is mounted, by Hono or by another server.
      Scalar({
        url: 'openapi.json',
        cdn: REFERENCE_SCRIPT_PATH.slice(1),
        pageTitle: 'Parley API reference',
        // Every tag open: the whole API reads top to bottom, and browser search finds everything.
        defaultOpenAllTags: true,
        // Nothing leaves the server: no web fonts, no telemetry, no hosted AI agent.
        withDefaultFonts: false,
        telemetry: false,
        agent: { disabled: true },
        showDeveloperTools: 'never',
      } as Parameters<typeof Scalar>[0]),
    )
    // The page's own asset (Scalar's standalone bundle, @scalar/api-reference, MIT, so the page
    // needs no CDN): part of the page, not an operation of the API, so not in the document.
    .get(REFERENCE_SCRIPT_PATH, async (c) => {
      referenceScript ??= readFile(referenceScriptFile())
        .then((bytes) => new Uint8Array(bytes))
        .catch((error: unknown) => {
          referenceScript = undefined;
          throw error;
        });
      c.header('Content-Type', 'text/javascript; charset=utf-8');
      c.header('Cache-Control', 'public, max-age=86400');
      return c.body(await referenceScript);
    });
  return answerWrongMethods(routes);
}
