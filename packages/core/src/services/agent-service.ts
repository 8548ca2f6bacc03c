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
import { withVersion } from '../record-version.js';
import { domainEvent, eventDraft } from './domain-events.js';
import { ifMatchVersions, preconditionFailed, versionMatches, type WriteConditions } from './entity-tag.js';
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
    await this.storage.agents.insert(workspaceId, agent, domainEvent(this.ids, this.clock, workspaceId, 'agent.created', agent));
    return withVersion(agent, 1);
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
   * moves `updatedAt` to now (never backwards) and emits `agent.updated`. An empty patch changes
   * nothing and emits nothing. The store merges the fields into the agent as stored, in one atomic
   * step (ports/storage.ts `Change`), so concurrent PATCHes of different fields all survive. With
   * `conditions.ifMatch`, the agent is changed only while its {@link entityTag} matches, decided in
   * that same step.
   * @throws ParleyError `validation_failed`, `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async update(workspaceId: string, id: string, input: AgentUpdateInput, conditions: WriteConditions = {}): Promise<Agent> {
    const changes = givenFields(parse(this.schemas.update, input));
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    if (Object.keys(changes).length === 0) {
      const agent = await this.get(workspaceId, id);
      if (!versionMatches(ifVersion, agent)) throw preconditionFailed(agent);
      return agent;
    }
    const result = await this.storage.agents.update(workspaceId, id, {
      set: changes,
      touch: isoTimestamp(this.clock.now()),
      ifVersion,
      event: this.draft(workspaceId, 'agent.updated'),
    });
    if (!result) throw ParleyError.notFound('agent', id);
    if (result.outcome === 'unmet') throw preconditionFailed(result.record);
    return result.record;
  }

  /**
   * Deletes the agent with its conversations and their messages; emits only `agent.deleted`
   * (docs/api.md#resources). Returns the deleted agent. With `conditions.ifMatch`, deletes only while the
   * agent's {@link entityTag} matches, checked in the same atomic step as the removal.
   * @throws ParleyError `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async delete(workspaceId: string, id: string, conditions: WriteConditions = {}): Promise<Agent> {
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const result = await this.storage.agents.delete(workspaceId, id, this.draft(workspaceId, 'agent.deleted'), { ifVersion });
    if (!result) throw ParleyError.notFound('agent', id);
    if (result.outcome === 'unmet') throw preconditionFailed(result.record);
    return result.record;
  }

  private draft(workspaceId: string, type: 'agent.updated' | 'agent.deleted') {
    return eventDraft(this.ids, this.clock, workspaceId, type);
  }
}
