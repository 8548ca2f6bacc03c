/** @module Plants sandbox schemas, after plants-openapi.json. */
import * as v from 'valibot';

const INT32_MAX = 2_147_483_647;

/** Query of `GET /plants`: `limit`, an int32 ≥ 0 given as decimal digits. */
export const PlantListQuerySchema = v.object({
  limit: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,10}$/), v.transform(Number))], 'limit must be an integer from 0 to 2147483647.'),
      v.integer('limit must be an integer from 0 to 2147483647.'),
      v.minValue(0, 'limit must be an integer from 0 to 2147483647.'),
      v.maxValue(INT32_MAX, 'limit must be an integer from 0 to 2147483647.'),
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
  tag: v.optional(v.pipe(v.string(), v.maxLength(256, 'tag must be at most 256 characters.'), v.description('Tag to specify the type'))),
});
export type PlantCreateInput = v.InferInput<typeof PlantCreateSchema>;

/**
 * Path parameter of `DELETE /plants/{id}`: an int64 ≥ 1 within JS's safe range, as decimal digits
 * (or a number, which is how the OpenAPI document can call it an integer).
 */
export const PlantIdSchema = v.pipe(
  v.union([v.number(), v.pipe(v.string(), v.regex(/^\d{1,16}$/), v.transform(Number))], 'id must be a positive integer.'),
  v.safeInteger('id must be a positive integer.'),
  v.minValue(1, 'id must be a positive integer.'),
  v.metadata({ format: 'int64', description: 'ID of plant to delete' }),
);
