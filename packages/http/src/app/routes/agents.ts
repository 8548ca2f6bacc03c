/** @module `/agents`: create, list, read, update and delete agents (docs/api.md#routes, docs/api.md#resources). */
import {
  AgentCreateSchema,
  AgentListQuerySchema,
  AgentListSchema,
  AgentSchema,
  AgentWithToolsSecretSchema,
  AgentUpdateSchema,
  DeleteResultSchema,
  type Core,
} from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { jsonWithEntityTag, writeConditions } from './entity-tags.js';
import { json } from '../response.js';

const byId = idPath('agent', 'agt_');
const notFound = "No agent with this id in the key's workspace.";

/** Agent routes, to be mounted at `/api/agents` behind authentication; `core.agents` validates. */
export function agentRoutes(core: Core, body: BodyReader): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  return new Hono<ParleyEnv>()
    .post(
      '/',
      ...endpoint(
        {
          operationId: 'createAgent',
          summary: 'Create an agent',
          description: 'A new agent is `active`. Emits `agent.created`.',
          tag: 'Agents',
          scope: 'agents:write',
          body: AgentCreateSchema,
          success: {
            status: 201,
            description:
              'The created agent, every field present; with `toolsSecret` when the agent got one (given, or generated for its first webhook tool) — the only time it is shown.',
            schema: AgentWithToolsSecretSchema,
          },
        },
        async ({ scope, body }, c) => {
          const agent = await core.agents.create(scope, body);
          return json(c, agent, 201);
        },
      ),
    )
    .get(
      '/',
      ...endpoint(
        {
          operationId: 'listAgents',
          summary: 'List agents',
          description: 'Page-numbered, newest first.',
          tag: 'Agents',
          scope: 'agents:read',
          query: AgentListQuerySchema,
          success: { status: 200, description: 'A page of agents with the total count.', schema: AgentListSchema },
        },
        async ({ scope, query }, c) => {
          return json(c, await core.agents.list(scope, query));
        },
      ),
    )
    .get(
      '/:id',
      ...endpoint(
        {
          operationId: 'getAgent',
          summary: 'Get an agent',
          tag: 'Agents',
          scope: 'agents:read',
          path: byId,
          success: { status: 200, description: 'The agent.', schema: AgentSchema, etag: true },
          errors: { 404: notFound },
        },
        async ({ scope, params }, c) => {
          return jsonWithEntityTag(c, await core.agents.get(scope, params.id));
        },
      ),
    )
    .patch(
      '/:id',
      ...endpoint(
        {
          operationId: 'updateAgent',
          summary: 'Update an agent',
          description:
            'Every field is optional; `null` clears `systemPrompt`, `temperature` and `maxTokens`; `configuration` and `tools` are replaced as a whole. Emits `agent.updated`.',
          tag: 'Agents',
          scope: 'agents:write',
          path: byId,
          body: AgentUpdateSchema,
          success: {
            status: 200,
            description:
              'The whole updated agent; with `toolsSecret` when this update set or generated it — the only time it is shown.',
            schema: AgentWithToolsSecretSchema,
            etag: true,
          },
          errors: { 404: notFound },
          ifMatch: true,
        },
        async ({ scope, params, body }, c) => {
          // The tag is from id + version: the same with or without the secret shown.
          return jsonWithEntityTag(c, await core.agents.update(scope, params.id, body, writeConditions(c)));
        },
      ),
    )
    .delete(
      '/:id',
      ...endpoint(
        {
          operationId: 'deleteAgent',
          summary: 'Delete an agent',
          description: 'Also deletes its conversations and their messages. Emits only `agent.deleted`.',
          tag: 'Agents',
          scope: 'agents:write',
          path: byId,
          success: { status: 200, description: 'Deleted.', schema: DeleteResultSchema },
          errors: { 404: notFound },
          ifMatch: true,
        },
        async ({ scope, params }, c) => {
          const agent = await core.agents.delete(scope, params.id, writeConditions(c));
          return json(c, { success: true, message: `Agent ${agent.id} and its conversations were deleted.` });
        },
      ),
    );
}
