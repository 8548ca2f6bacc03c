/** @module `/agents`: create, list, read, update and delete agents (docs/api.md#routes, docs/api.md#resources). */
import {
  AgentCreateSchema,
  AgentListQuerySchema,
  AgentListSchema,
  AgentSchema,
  AgentWithToolsSecretSchema,
  AgentUpdateSchema,
  DeleteResultSchema,
  type AgentCreateInput,
  type AgentListQuery,
  type AgentUpdateInput,
  type Core,
  entityTag,
} from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { documentAndRequireScope, idPath } from '../openapi/operation.js';
import { jsonWithEntityTag, writeConditions } from './entity-tags.js';

const byId = idPath('agent', 'agt_');
const notFound = 'No agent with this id in the key\'s workspace.';

/**
 * Agent routes, to be mounted at `/api/agents` behind authentication. Bodies and queries go to
 * core unvalidated: `core.agents` validates them and throws `validation_failed`, which is why
 * they are cast to the service's input types here.
 */
export function agentRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  return new Hono<ParleyEnv>()
    .post(
      '/',
      documentAndRequireScope({
        operationId: 'createAgent',
        summary: 'Create an agent',
        description: 'A new agent is `active`. Emits `agent.created`.',
        tag: 'Agents',
        scope: 'agents:write',
        body: AgentCreateSchema,
        success: { status: 201, description: 'The created agent, every field present; with `toolsSecret` when the agent got one (given, or generated for its first webhook tool) — the only time it is shown.', schema: AgentWithToolsSecretSchema },
      }),
      body,
      async (c) => {
        const agent = await core.agents.create(c.var.principal.workspaceId, c.req.valid('json') as AgentCreateInput);
        return c.json(agent, 201);
      },
    )
    .get(
      '/',
      documentAndRequireScope({
        operationId: 'listAgents',
        summary: 'List agents',
        description: 'Page-numbered, newest first.',
        tag: 'Agents',
        scope: 'agents:read',
        query: AgentListQuerySchema,
        success: { status: 200, description: 'A page of agents with the total count.', schema: AgentListSchema },
      }),
      async (c) => {
        return c.json(await core.agents.list(c.var.principal.workspaceId, c.req.query() as AgentListQuery));
      },
    )
    .get(
      '/:id',
      documentAndRequireScope({
        operationId: 'getAgent',
        summary: 'Get an agent',
        tag: 'Agents',
        scope: 'agents:read',
        path: byId,
        success: { status: 200, description: 'The agent.', schema: AgentSchema, etag: true },
        errors: { 404: notFound },
      }),
      async (c) => {
        return jsonWithEntityTag(c, await core.agents.get(c.var.principal.workspaceId, c.req.param('id')));
      },
    )
    .patch(
      '/:id',
      documentAndRequireScope({
        operationId: 'updateAgent',
        summary: 'Update an agent',
        description: 'Every field is optional; `null` clears `systemPrompt`, `temperature` and `maxTokens`; `configuration` is replaced as a whole. Emits `agent.updated`.',
        tag: 'Agents',
        scope: 'agents:write',
        path: byId,
        body: AgentUpdateSchema,
        success: { status: 200, description: 'The whole updated agent; with `toolsSecret` when this update set or generated it — the only time it is shown.', schema: AgentWithToolsSecretSchema, etag: true },
        errors: { 404: notFound },
        ifMatch: true,
      }),
      body,
      async (c) => {
        const input = c.req.valid('json') as AgentUpdateInput;
        const agent = await core.agents.update(c.var.principal.workspaceId, c.req.param('id'), input, writeConditions(c));
        // The tag is the agent's as GET shows it: without the secret.
        const { toolsSecret, ...shown } = agent;
        c.header('ETag', entityTag(shown));
        return c.json(toolsSecret === undefined ? shown : { ...shown, toolsSecret });
      },
    )
    .delete(
      '/:id',
      documentAndRequireScope({
        operationId: 'deleteAgent',
        summary: 'Delete an agent',
        description: 'Also deletes its conversations and their messages. Emits only `agent.deleted`.',
        tag: 'Agents',
        scope: 'agents:write',
        path: byId,
        success: { status: 200, description: 'Deleted.', schema: DeleteResultSchema },
        errors: { 404: notFound },
        ifMatch: true,
      }),
      async (c) => {
        const agent = await core.agents.delete(c.var.principal.workspaceId, c.req.param('id'), writeConditions(c));
        return c.json({ success: true, message: `Agent ${agent.id} and its conversations were deleted.` });
      },
    );
}
