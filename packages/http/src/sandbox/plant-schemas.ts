/** @module The plants sandbox's schemas and record, after plants-openapi.json. */
import * as v from 'valibot';

const INT32_MAX = 2_147_483_647;
const LIMIT_MESSAGE = `limit must be an integer from 0 to ${INT32_MAX}.`;
const ID_MESSAGE = 'id must be a positive integer.';

/** A plant of the sandbox (plants-openapi.json `NewPlant`): `id` is an int64 within JS's safe range. */
export interface Plant {
  id: number;
  name: string;
  tag?: string;
}

/** Query of `GET /plants`: `limit`, an int32 ≥ 0 given as a number or at most 10 decimal digits. */
export const PlantListQuerySchema = v.object({
  limit: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,10}$/), v.transform(Number))], LIMIT_MESSAGE),
      v.integer(LIMIT_MESSAGE),
      v.minValue(0, LIMIT_MESSAGE),
      v.maxValue(INT32_MAX, LIMIT_MESSAGE),
      v.metadata({ format: 'int32', description: 'The maximum number of results to return' }),
    ),
  ),
});
export type PlantListQuery = v.InferInput<typeof PlantListQuerySchema>;

/** `NewPlant` of plants-openapi.json: `id` (int64, here ≥ 1 and a safe integer), `name`, `tag`. */
export const PlantCreateSchema = v.strictObject({
  id: v.pipe(
    v.number(),
    v.safeInteger('id must be an integer.'),
    v.minValue(1, 'id must be at least 1.'),
    v.metadata({ format: 'int64', description: 'Identification number of the plant' }),
  ),
  name: v.pipe(
    v.string(),
    v.minLength(1, 'name must not be empty.'),
    v.maxLength(256, 'name must be at most 256 characters.'),
    v.description('The name of the plant'),
  ),
  tag: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(256, 'tag must be at most 256 characters.'),
      v.description('Tag to specify the type'),
    ),
  ),
});
export type PlantCreateInput = v.InferInput<typeof PlantCreateSchema>;

/**
 * Path parameter of `DELETE /plants/{id}`: an int64 ≥ 1 within JS's safe range, as at most 16
 * decimal digits (or a number, which is how the OpenAPI document can call it an integer).
 */
export const PlantIdSchema = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,16}$/), v.transform(Number))], ID_MESSAGE),
  v.integer(ID_MESSAGE),
  v.minValue(1, ID_MESSAGE),
  v.maxValue(Number.MAX_SAFE_INTEGER, ID_MESSAGE),
  v.metadata({ format: 'int64', description: 'ID of plant to delete' }),
);

/** `Plant` of plants-openapi.json. Answers carry the plant's `id` as well. */
export const PlantSchema = v.object({
  name: v.pipe(v.string(), v.description('The name of the plant')),
  tag: v.optional(v.pipe(v.string(), v.description('Tag to specify the type'))),
});

/** `Error` of plants-openapi.json: the sandbox's flat error, `error` being the HTTP status. */
export const PlantErrorSchema = v.object({
  error: v.pipe(v.number(), v.integer(), v.metadata({ format: 'int32' })),
  message: v.string(),
});

/**
 * The sandbox's named schemas for the OpenAPI document's `components.schemas`, under the names
 * plants-openapi.json gives them (so Parley's own error is `ApiError` there).
 */
export const SANDBOX_SCHEMAS = { Plant: PlantSchema, NewPlant: PlantCreateSchema, Error: PlantErrorSchema };
