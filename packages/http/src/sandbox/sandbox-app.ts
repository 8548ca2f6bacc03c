/** @module The plants sandbox (plants-openapi.json, docs/sandbox.md) as a Hono app of its own. */
import { assertStorableStrings, type Core } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import * as v from 'valibot';
import type { ParleyEnv } from '../app/env.js';
import { createLogger, type Logger } from '../app/logger.js';
import { bearerAuth } from '../app/middleware/bearer-auth.js';
import { errorHandler } from '../app/middleware/error-handler.js';
import { jsonBody } from '../app/middleware/json-body.js';
import { rateLimit } from '../app/middleware/rate-limit.js';
import { documentAndRequireScope } from '../app/openapi/operation.js';
import { answerUnmatched } from '../app/routes/fallback.js';
import { json, respond } from '../app/response.js';
import {
  PlantCreateSchema,
  PlantIdSchema,
  PlantListQuerySchema,
  PlantSchema,
  type PlantCreateInput,
  type PlantListQuery,
} from './plant-schemas.js';
import { PlantService } from './plant-service.js';
import { plantStoreFor } from './plant-store-for.js';
import type { PlantStore } from './plant-store.js';

const PlantArraySchema = v.array(PlantSchema);
const byId = v.object({ id: PlantIdSchema });

/** Options of {@link createSandboxApp}. */
export interface SandboxOptions {
  /** Largest request body in bytes (413 above it); default 1 MiB. */
  bodyLimitBytes?: number;
  /** Where unexpected errors are logged; default a pino logger at `info` on stdout. */
  logger?: Logger;
  /**
   * Middleware every sandbox request passes first, in order; default `[bearerAuth(…), rateLimit(core)]`
   * over `core.apiKeys` and `core.rateLimiter`, so the API's keys work here and draw on the same
   * workspace quota (the quota lives in the rate-limit store, not in the middleware).
   */
  guard?: MiddlewareHandler<ParleyEnv>[];
  /** Where the plants are kept; default {@link plantStoreFor}`(core.adapters)`, the core's backend. */
  store?: PlantStore;
}

/**
 * The sample plant store of plants-openapi.json, mountable at any path
 * (`host.route('/sandbox', createSandboxApp(core))`):
 * - `GET /plants?limit=` → 200 `Plant[]` (`limit` an int32 ≥ 0, else 400), scope `plants:read`;
 * - `POST /plants` with a `NewPlant` body → 200 the plant (409 when the id is taken), scope `plants:write`;
 * - `DELETE /plants/{id}` → 204, scope `plants:write`.
 * Same bearer keys as the API. Every error, 401 and 403 included, is flat:
 * `{"error": <HTTP status>, "message": "..."}` (the spec's `Error` schema).
 * @throws TypeError without a `guard` when `core` has no `rateLimits` store (see `rateLimit`).
 */
export function createSandboxApp(core: Core, options: SandboxOptions = {}): Hono<ParleyEnv> {
  const logger = options.logger ?? createLogger();
  const body = jsonBody({ maxBytes: options.bodyLimitBytes });
  const plants = new PlantService(options.store ?? plantStoreFor(core.adapters));
  const sandbox = new Hono<ParleyEnv>();
  sandbox.use('*', ...(options.guard ?? [bearerAuth({ apiKeys: core.apiKeys }), rateLimit(core)]));
  sandbox
    .get(
      '/plants',
      documentAndRequireScope({
        operationId: 'listPlants',
        summary: 'List plants',
        description: 'Returns all plants from the system that the user has access to',
        tag: 'Plants sandbox',
        scope: 'plants:read',
        shape: 'sandbox',
        query: PlantListQuerySchema,
        success: { status: 200, description: 'Plant response', schema: PlantArraySchema },
      }),
      async (c) => {
        return json(c, await plants.list(c.get('principal').workspaceId, c.req.query() as PlantListQuery));
      },
    )
    .post(
      '/plants',
      documentAndRequireScope({
        operationId: 'createPlant',
        summary: 'Add a plant',
        description: 'Creates a new plant in the store',
        tag: 'Plants sandbox',
        scope: 'plants:write',
        shape: 'sandbox',
        body: PlantCreateSchema,
        success: { status: 200, description: 'plant response', schema: PlantSchema },
        errors: { 409: 'A plant with this id exists.' },
      }),
      body,
      async (c) => {
        // plants-openapi.json answers a created plant with 200, not 201.
        return json(c, await plants.create(c.get('principal').workspaceId, c.req.valid('json') as PlantCreateInput));
      },
    )
    .delete(
      '/plants/:id',
      documentAndRequireScope({
        operationId: 'deletePlant',
        summary: 'Delete a plant',
        description: 'Deletes a single plant based on the ID supplied',
        tag: 'Plants sandbox',
        scope: 'plants:write',
        shape: 'sandbox',
        path: byId,
        success: { status: 204, description: 'Plant deleted' },
        // plants-openapi.json's 400: here an id that is not a positive integer.
        errors: { 400: undefined, 404: 'No plant with this id.' },
      }),
      async (c) => {
        // As every `/api` route does (routes/endpoint.ts): `id: Must not contain U+0000…`.
        assertStorableStrings(c.req.param());
        await plants.delete(c.get('principal').workspaceId, c.req.param('id'));
        return respond(c, null, 204);
      },
    );
  answerUnmatched(sandbox);
  sandbox.onError(errorHandler({ logger, shape: 'sandbox' }));
  return sandbox;
}
