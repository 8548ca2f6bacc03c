/** @module `/agents`: create, list, read, update and delete agents (spec §4.1, decisions §4). */
import type { AgentCreateInput, AgentListQuery, AgentUpdateInput, Core } from '@parley/core';
import { Hono, type MiddlewareHandler } from 'hono';
import type { ParleyEnv } from '../env.js';
import type { JsonBodyInput } from '../middleware/json-body.js';
import { requireScope } from '../middleware/require-scope.js';

/**
 * Agent routes, to be mounted at `/api/agents` behind authentication. Bodies and queries go to
 * core unvalidated: `core.agents` validates them and throws `validation_failed`, which is why
 * they are cast to the service's input types here.
 */
export function agentRoutes(core: Core, body: MiddlewareHandler<ParleyEnv, string, JsonBodyInput>): Hono<ParleyEnv> {
  const read = requireScope('agents:read');
  const write = requireScope('agents:write');
  return new Hono<ParleyEnv>()
    .post('/', write, body, async (c) => {
      const agent = await core.agents.create(c.var.principal.workspaceId, c.req.valid('json') as AgentCreateInput);
      return c.json(agent, 201);
    })
    .get('/', read, async (c) => {
      return c.json(await core.agents.list(c.var.principal.workspaceId, c.req.query() as AgentListQuery));
    })
    .get('/:id', read, async (c) => {
      return c.json(await core.agents.get(c.var.principal.workspaceId, c.req.param('id')));
    })
    .patch('/:id', write, body, async (c) => {
      const agent = await core.agents.update(c.var.principal.workspaceId, c.req.param('id'), c.req.valid('json') as AgentUpdateInput);
      return c.json(agent);
    })
    .delete('/:id', write, async (c) => {
      const agent = await core.agents.delete(c.var.principal.workspaceId, c.req.param('id'));
      return c.json({ success: true, message: `Agent ${agent.id} and its conversations were deleted.` });
    });
}
