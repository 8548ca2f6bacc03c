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
    ),
  ),
});
export type PlantListQuery = v.InferInput<typeof PlantListQuerySchema>;

/** `NewPlant` of plants-openapi.json: `id` (int64, here ≥ 1 and a safe integer), `name`, `tag`. */
export const PlantCreateSchema = v.strictObject({
  id: v.pipe(v.number(), v.safeInteger('id must be an integer.'), v.minValue(1, 'id must be at least 1.')),
  name: v.pipe(v.string(), v.minLength(1, 'name must not be empty.'), v.maxLength(256, 'name must be at most 256 characters.')),
  tag: v.optional(v.pipe(v.string(), v.maxLength(256, 'tag must be at most 256 characters.'))),
});
export type PlantCreateInput = v.InferInput<typeof PlantCreateSchema>;

/** Path parameter of `DELETE /plants/{id}`: an int64 ≥ 1 within JS's safe range. */
export const PlantIdSchema = v.pipe(
  v.string(),
  v.regex(/^\d{1,16}$/, 'id must be a positive integer.'),
  v.transform(Number),
  v.safeInteger('id must be a positive integer.'),
  v.minValue(1, 'id must be a positive integer.'),
);
