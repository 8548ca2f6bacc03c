/** @module Agents: create, read, list, update, delete (docs/api.md#routes, docs/api.md#resources). */
import { inject, injectable } from '../di.js';
import { ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { Storage } from '../ports/storage.js';
import {
  AgentCreateSchema,
  AgentListQuerySchema,
  AgentUpdateSchema,
  type AgentSchemas,
  type AgentCreateInput,
  type AgentListQuery,
  type AgentUpdateInput,
} from '../schemas/agent.js';
import { TOKENS } from '../tokens.js';
import type { Agent } from '../types.js';
import { parse } from '../validation.js';
import { domainEvent } from './domain-events.js';
import { checkIfMatch, type WriteConditions } from './entity-tag.js';
import { givenFields } from './patch.js';
import { isoTimestamp } from './timestamp.js';

/** A page of agents: `page` and `limit` echo the (defaulted) query, `total` counts all matches. */
export interface AgentList {
  agents: Agent[];
  total: number;
  page: number;
  limit: number;
}

/**
 * Agents of a workspace. Every method takes the workspace id; another workspace's agent is
 * `not_found`. Inputs are validated with the schemas of `schemas/agent.ts`
 * (`validation_failed` on failure, nothing changed).
 */
@injectable()
export class AgentService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    // The core's schemas: their `model` picklist holds the configured model names (createCore `models`).
    @inject(TOKENS.agentSchemas) private readonly schemas: AgentSchemas = { create: AgentCreateSchema, update: AgentUpdateSchema },
  ) {}

  /** Creates an `active` agent, recording `agent.created` with it. */
  async create(workspaceId: string, input: AgentCreateInput): Promise<Agent> {
    const fields = parse(this.schemas.create, input);
    const now = isoTimestamp(this.clock.now());
    const agent: Agent = {
      id: this.ids.next('agt'),
      name: fields.name,
      description: fields.description,
      model: fields.model,
      systemPrompt: fields.systemPrompt ?? null,
      temperature: fields.temperature ?? null,
      maxTokens: fields.maxTokens ?? null,
      configuration: fields.configuration ?? {},
      status: 'active',
      createdAt: now,
      updatedAt: now,
    };
    await this.storage.agents.insert(workspaceId, agent, this.event(workspaceId, 'agent.created', agent));
    return agent;
  }

  /** @throws ParleyError `not_found` */
  async get(workspaceId: string, id: string): Promise<Agent> {
    const agent = await this.storage.agents.get(workspaceId, id);
    if (!agent) throw ParleyError.notFound('agent', id);
    return agent;
  }

  /** Newest first; `page` ≥ 1 (default 1), `limit` 1–100 (default 20), optional `status`. */
  async list(workspaceId: string, query: AgentListQuery = {}): Promise<AgentList> {
    const { page, limit, status } = parse(AgentListQuerySchema, query);
    const { items, total } = await this.storage.agents.list(workspaceId, { offset: (page - 1) * limit, limit, status });
    return { agents: items, total, page, limit };
  }

  /**
   * Applies the given fields (`null` clears an optional one; `configuration` is replaced whole),
   * bumps `updatedAt` and emits `agent.updated`. An empty patch changes nothing and emits nothing.
   * With `conditions.ifMatch`, the agent is changed only while its {@link entityTag} matches,
   * checked in the same compare-and-set as the write.
   * @throws ParleyError `validation_failed`, `not_found`, `precondition_failed`, `invalid_request` (malformed `ifMatch`)
   */
  async update(workspaceId: string, id: string, input: AgentUpdateInput, conditions: WriteConditions = {}): Promise<Agent> {
    const changes = givenFields(parse(this.schemas.update, input));
    if (Object.keys(changes).length === 0) {
      const agent = await this.get(workspaceId, id);
      checkIfMatch(conditions.ifMatch, agent);
      return agent;
    }
    // Compare-and-set (ports/storage.ts `Update`): a concurrent PATCH of other fields survives,
    // because the patch is applied to the record as stored at the write.
    const agent = await this.storage.agents.update(workspaceId, id, (current) => {
      checkIfMatch(conditions.ifMatch, current);
      const next: Agent = { ...current, ...changes, updatedAt: isoTimestamp(this.clock.now()) };
      return { record: next, event: this.event(workspaceId, 'agent.updated', next) };
    });
    if (!agent) throw ParleyError.notFound('agent', id);
    return agent;
  }

  /**
   * Deletes the agent with its conversations and their messages; emits only `agent.deleted`
   * (docs/api.md#resources). Returns the deleted agent. With `conditions.ifMatch`, deletes only while the
   * agent's {@link entityTag} matches, checked in the same atomic step as the removal.
   * @throws ParleyError `not_found`, `precondition_failed`, `invalid_request` (malformed `ifMatch`)
   */
  async delete(workspaceId: string, id: string, conditions: WriteConditions = {}): Promise<Agent> {
    const agent = await this.storage.agents.delete(workspaceId, id, (deleted) => {
      checkIfMatch(conditions.ifMatch, deleted);
      return this.event(workspaceId, 'agent.deleted', deleted);
    });
    if (!agent) throw ParleyError.notFound('agent', id);
    return agent;
  }

  private event(workspaceId: string, type: 'agent.created' | 'agent.updated' | 'agent.deleted', agent: Agent) {
    return domainEvent(this.ids, this.clock, workspaceId, type, agent);
  }
}
