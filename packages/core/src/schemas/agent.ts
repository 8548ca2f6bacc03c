/** @module Agent request schemas (docs/api.md#routes, docs/api.md#resources, docs/pagination.md): the single source of validation. */
import * as v from 'valibot';
import { AGENT_MODELS, AGENT_STATUSES } from '../types.js';
import { JsonObjectSchema, MAX_JSON_OBJECT_BYTES, MAX_JSON_OBJECT_DEPTH, PageQueryEntries, text } from './common.js';
import { AutoReplySchema, MaxStepsSchema, ToolsSchema } from './tools.js';
import { WebhookSecretSchema } from './webhook.js';
import { McpServersInputSchema } from './mcp.js';

/**
 * An agent's `configuration`: the caller's own JSON object (the metadata rules: at most 16 KiB,
 * 8 levels), stored and returned unchanged. Parley never reads it: its own settings are the
 * agent's top-level `tools`, `maxSteps`, `autoReply` and `mcpServers` (docs/api.md#resources).
 */
export const AgentConfigurationSchema = v.pipe(
  JsonObjectSchema,
  v.description(
    'Yours: any JSON object, stored and returned unchanged; Parley never reads it. ' +
      `At most ${MAX_JSON_OBJECT_BYTES} bytes serialized, nested at most ${MAX_JSON_OBJECT_DEPTH} levels, ` +
      'without `__proto__`, `constructor` or `prototype` keys.',
  ),
);

/** The error of an unknown `model`: every allowed name, and where more come from. */
function modelMessage(models: readonly string[]): string {
  const configured = models.filter((name) => !(AGENT_MODELS as readonly string[]).includes(name));
  const where =
    configured.length > 0
      ? `the spec's three and ${configured.join(', ')} from MODELS`
      : "the spec's three; none is configured in MODELS";
  return `Expected one of ${models.join(', ')} (${where}).`;
}

function agentFields(models: readonly string[]) {
  return {
    name: text(256),
    description: text(1024, 0),
    // A picklist of plain strings: the names come from the core's configuration (createCore `models`,
    // the server's MODELS), and the message names them all, so a typo is fixed without the docs.
    model: v.picklist(models as string[], modelMessage(models)),
    systemPrompt: v.pipe(v.string(), v.maxLength(32_768, 'Expected at most 32768 characters.')),
    temperature: v.pipe(
      v.number(),
      v.minValue(0, 'Expected a number from 0 to 2.'),
      v.maxValue(2, 'Expected a number from 0 to 2.'),
    ),
    maxTokens: v.pipe(
      v.number(),
      v.integer('Expected an integer from 1 to 1000000.'),
      v.minValue(1, 'Expected an integer from 1 to 1000000.'),
      v.maxValue(1_000_000, 'Expected an integer from 1 to 1000000.'),
    ),
    configuration: AgentConfigurationSchema,
    tools: ToolsSchema,
    maxSteps: MaxStepsSchema,
    autoReply: AutoReplySchema,
    mcpServers: McpServersInputSchema,
    toolsSecret: v.pipe(
      WebhookSecretSchema,
      v.description(
        "Secret signing the calls of the agent's webhook tools (Standard Webhooks); returned only in this response. Generated when an agent first gets a webhook tool and has none.",
      ),
    ),
    status: v.picklist(AGENT_STATUSES),
  };
}

/**
 * The agent body schemas of a core whose agents may use `models` (the spec's three plus every
 * configured model name, see `Core.agentModels`): `create` for `POST /api/agents`, `update` for
 * `PATCH /api/agents/:id`. The exported {@link AgentCreateSchema} and {@link AgentUpdateSchema} are
 * those of a core without configured models.
 */
export function agentSchemas(models: readonly string[]) {
  const fields = agentFields(models);
  return {
    /** Body of `POST /api/agents`. Unknown fields are rejected. */
    create: v.strictObject({
      name: fields.name,
      description: fields.description,
      model: fields.model,
      systemPrompt: v.optional(fields.systemPrompt),
      temperature: v.optional(fields.temperature),
      maxTokens: v.optional(fields.maxTokens),
      configuration: v.optional(fields.configuration),
      tools: v.optional(fields.tools),
      maxSteps: v.optional(fields.maxSteps),
      autoReply: v.optional(fields.autoReply),
      mcpServers: v.optional(fields.mcpServers),
      toolsSecret: v.optional(fields.toolsSecret),
    }),
    /**
     * Body of `PATCH /api/agents/:id`: every field optional; `null` clears `systemPrompt`,
     * `temperature` and `maxTokens`; `configuration`, `tools` and `mcpServers` replace the stored ones as a whole.
     */
    update: v.strictObject({
      name: v.optional(fields.name),
      description: v.optional(fields.description),
      model: v.optional(fields.model),
      systemPrompt: v.optional(v.nullable(fields.systemPrompt)),
      temperature: v.optional(v.nullable(fields.temperature)),
      maxTokens: v.optional(v.nullable(fields.maxTokens)),
      configuration: v.optional(fields.configuration),
      tools: v.optional(fields.tools),
      maxSteps: v.optional(fields.maxSteps),
      autoReply: v.optional(fields.autoReply),
      mcpServers: v.optional(fields.mcpServers),
      toolsSecret: v.optional(fields.toolsSecret),
      status: v.optional(fields.status),
    }),
  };
}

/** The agent body schemas of one core (see {@link agentSchemas}). */
export type AgentSchemas = ReturnType<typeof agentSchemas>;

const defaults = agentSchemas(AGENT_MODELS);

/** Body of `POST /api/agents` with the spec's three models. Unknown fields are rejected. */
export const AgentCreateSchema = defaults.create;
export type AgentCreateInput = v.InferInput<typeof AgentCreateSchema>;

/** Body of `PATCH /api/agents/:id` with the spec's three models (see {@link agentSchemas}). */
export const AgentUpdateSchema = defaults.update;
export type AgentUpdateInput = v.InferInput<typeof AgentUpdateSchema>;

const fields = agentFields(AGENT_MODELS);

/** Query of `GET /api/agents`: `page`, `limit`, optional `status` filter. */
export const AgentListQuerySchema = v.strictObject({
  ...PageQueryEntries,
  status: v.optional(fields.status),
});
export type AgentListQuery = v.InferInput<typeof AgentListQuerySchema>;
