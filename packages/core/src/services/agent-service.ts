/** @module Agents: create, read, list, update, delete (docs/api.md#routes, docs/api.md#resources). */
import type { Admission } from '../rate-limit/admission.js';
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
import { agentTools } from '../schemas/tools.js';
import type { Agent, AgentRecord, JsonObject } from '../types.js';
import { parse, validationFailed } from '../validation.js';
import { withoutHiddenFields } from '../hidden-fields.js';
import { recordVersion, withVersion } from '../record-version.js';
import type { WebhookTargetPolicy } from './webhook-targets.js';
import { generateWebhookSecret } from './webhook-service.js';
import { domainEvent, eventDraft } from './domain-events.js';
import { ifMatchVersions, preconditionFailed, versionMatches, type WriteConditions } from './entity-tag.js';
import { givenFields } from './patch.js';
import { isoTimestamp } from './timestamp.js';

/**
 * An agent as the create or update that set its tools secret answers: with `toolsSecret`, the only
 * time the API shows it (docs/replies-and-streams.md#tools).
 */
export type AgentWithToolsSecret = Agent & { toolsSecret?: string };

/** The agent without its tools secret: what reads, lists and events show. */
export function agentView(record: AgentRecord): Agent {
  return withoutHiddenFields(record);
}

const hasWebhookTool = (configuration: JsonObject) => agentTools(configuration).some((tool) => tool.kind === 'webhook');

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
 * Each method's optional last `admission` (the request's rate-limit decision, not made yet) goes
 * to every storage call it makes; the first that can decide it does (docs/rate-limits.md#one-round-trip).
 */
@injectable()
export class AgentService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    // The core's schemas: their `model` picklist holds the configured model names (createCore `models`).
    @inject(TOKENS.agentSchemas) private readonly schemas: AgentSchemas = { create: AgentCreateSchema, update: AgentUpdateSchema },
    // Webhook tools' URLs are checked like webhook endpoints' (docs/events-and-webhooks.md#targets).
    @inject(TOKENS.webhookTargets) private readonly targets?: WebhookTargetPolicy,
  ) {}

  /**
   * Creates an `active` agent, recording `agent.created` with it. With a webhook tool, the agent
   * gets the given `toolsSecret` or a generated one, returned in this response only.
   * @throws ParleyError `validation_failed` (also a webhook tool's URL refused as a target)
   */
  async create(workspaceId: string, input: AgentCreateInput, admission?: Admission): Promise<AgentWithToolsSecret> {
    const fields = parse(this.schemas.create, input);
    await this.checkToolTargets(fields.configuration);
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
    const toolsSecret = fields.toolsSecret ?? (hasWebhookTool(agent.configuration) ? generateWebhookSecret() : undefined);
    const record: AgentRecord = toolsSecret === undefined ? agent : { ...agent, toolsSecret };
    await this.storage.agents.insert(workspaceId, record, domainEvent(this.ids, this.clock, workspaceId, 'agent.created', agent), admission);
    return withVersion(record, 1);
  }

  /** @throws ParleyError `not_found` */
  async get(workspaceId: string, id: string, admission?: Admission): Promise<Agent> {
    const agent = await this.storage.agents.get(workspaceId, id, admission);
    if (!agent) throw ParleyError.notFound('agent', id);
    return agentView(agent);
  }

  /** Newest first; `page` ≥ 1 (default 1), `limit` 1–100 (default 20), optional `status`. */
  async list(workspaceId: string, query: AgentListQuery = {}, admission?: Admission): Promise<AgentList> {
    const { page, limit, status } = parse(AgentListQuerySchema, query);
    const { items, total } = await this.storage.agents.list(workspaceId, { offset: (page - 1) * limit, limit, status }, admission);
    return { agents: items.map(agentView), total, page, limit };
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
  async update(workspaceId: string, id: string, input: AgentUpdateInput, conditions: WriteConditions = {}, admission?: Admission): Promise<AgentWithToolsSecret> {
    const { toolsSecret: given, ...changes } = givenFields(parse(this.schemas.update, input));
    await this.checkToolTargets(changes.configuration);
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const set: Partial<AgentRecord> = given === undefined ? changes : { ...changes, toolsSecret: given };
    if (Object.keys(set).length === 0) {
      const agent = await this.get(workspaceId, id, admission);
      if (!versionMatches(ifVersion, agent)) throw preconditionFailed(agent);
      return agent;
    }
    // An agent that gets a webhook tool and has no tools secret gets a generated one, stored in the
    // same step as the change only while it still has none (a concurrent write may give it one).
    let generated: string | undefined;
    if (given === undefined && changes.configuration !== undefined && hasWebhookTool(changes.configuration)) {
      const current = await this.storage.agents.get(workspaceId, id, admission);
      if (current && current.toolsSecret === undefined) generated = generateWebhookSecret();
    }
    const apply = (secret: string | undefined) =>
      this.storage.agents.update(workspaceId, id, {
        set: secret === undefined ? set : { ...set, toolsSecret: secret },
        ...(secret !== undefined && { where: [{ field: 'toolsSecret', equals: null }] }),
        touch: isoTimestamp(this.clock.now()),
        ifVersion,
        event: this.draft(workspaceId, 'agent.updated'),
      }, admission);
    let result = await apply(generated);
    if (generated !== undefined && result?.outcome === 'unmet' && result.record.toolsSecret !== undefined && versionMatches(ifVersion, result.record)) {
      // It got a secret meanwhile (secrets are never removed): that one is kept.
      generated = undefined;
      result = await apply(undefined);
    }
    if (!result) throw ParleyError.notFound('agent', id);
    if (result.outcome === 'unmet') throw preconditionFailed(agentView(result.record));
    const secretSet = given ?? generated;
    const agent = agentView(result.record);
    return secretSet === undefined ? agent : withVersion({ ...agent, toolsSecret: secretSet }, recordVersion(agent));
  }

  /** @throws ParleyError `validation_failed` at `configuration.tools.N.url` when a webhook tool's URL is refused as a target. */
  private async checkToolTargets(configuration: JsonObject | undefined): Promise<void> {
    if (!configuration || !this.targets) return;
    const tools = agentTools(configuration);
    const refusals = await Promise.all(tools.map((tool) => (tool.url ? this.targets!.refusal(tool.url) : null)));
    const issues = refusals.flatMap((refusal, index) => (refusal === null ? [] : [{ path: `configuration.tools.${index}.url`, message: refusal }]));
    if (issues.length > 0) throw validationFailed(issues);
  }

  /**
   * Deletes the agent with its conversations and their messages; emits only `agent.deleted`
   * (docs/api.md#resources). Returns the deleted agent. With `conditions.ifMatch`, deletes only while the
   * agent's {@link entityTag} matches, checked in the same atomic step as the removal.
   * @throws ParleyError `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async delete(workspaceId: string, id: string, conditions: WriteConditions = {}, admission?: Admission): Promise<Agent> {
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const result = await this.storage.agents.delete(workspaceId, id, this.draft(workspaceId, 'agent.deleted'), { ifVersion }, admission);
    if (!result) throw ParleyError.notFound('agent', id);
    if (result.outcome === 'unmet') throw preconditionFailed(agentView(result.record));
    return agentView(result.record);
  }

  private draft(workspaceId: string, type: 'agent.updated' | 'agent.deleted') {
    return eventDraft(this.ids, this.clock, workspaceId, type);
  }
}
