/** @module Agent request schemas (docs/api.md#routes, docs/api.md#resources, docs/pagination.md): the single source of validation. */
import * as v from 'valibot';
import { AGENT_MODELS, AGENT_STATUSES } from '../types.js';
import { JsonObjectSchema, PageQueryEntries, text } from './common.js';

const fields = {
  name: text(256),
  description: text(1024, 0),
  model: v.picklist(AGENT_MODELS),
  systemPrompt: v.pipe(v.string(), v.maxLength(32_768, 'Expected at most 32768 characters.')),
  temperature: v.pipe(v.number(), v.minValue(0, 'Expected a number from 0 to 2.'), v.maxValue(2, 'Expected a number from 0 to 2.')),
  maxTokens: v.pipe(
    v.number(),
    v.integer('Expected an integer from 1 to 1000000.'),
    v.minValue(1, 'Expected an integer from 1 to 1000000.'),
    v.maxValue(1_000_000, 'Expected an integer from 1 to 1000000.'),
  ),
  configuration: JsonObjectSchema,
  status: v.picklist(AGENT_STATUSES),
};

/** Body of `POST /api/agents`. Unknown fields are rejected. */
export const AgentCreateSchema = v.strictObject({
  name: fields.name,
  description: fields.description,
  model: fields.model,
  systemPrompt: v.optional(fields.systemPrompt),
  temperature: v.optional(fields.temperature),
  maxTokens: v.optional(fields.maxTokens),
  configuration: v.optional(fields.configuration),
});
export type AgentCreateInput = v.InferInput<typeof AgentCreateSchema>;

/**
 * Body of `PATCH /api/agents/:id`: every field optional; `null` clears `systemPrompt`,
 * `temperature` and `maxTokens`; `configuration` replaces the stored object as a whole.
 */
export const AgentUpdateSchema = v.strictObject({
  name: v.optional(fields.name),
  description: v.optional(fields.description),
  model: v.optional(fields.model),
  systemPrompt: v.optional(v.nullable(fields.systemPrompt)),
  temperature: v.optional(v.nullable(fields.temperature)),
  maxTokens: v.optional(v.nullable(fields.maxTokens)),
  configuration: v.optional(fields.configuration),
  status: v.optional(fields.status),
});
export type AgentUpdateInput = v.InferInput<typeof AgentUpdateSchema>;

/** Query of `GET /api/agents`: `page`, `limit`, optional `status` filter. */
export const AgentListQuerySchema = v.strictObject({
  ...PageQueryEntries,
  status: v.optional(fields.status),
});
export type AgentListQuery = v.InferInput<typeof AgentListQuerySchema>;
