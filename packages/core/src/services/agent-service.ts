/** @module Agents: create, read, list, update, delete (docs/api.md#routes, docs/api.md#resources). */
import { inject, injectable } from '../di.js';
import { ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/ids.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { Storage } from '../ports/storage.js';
import {
  AgentListQuerySchema,
  type AgentSchemas,
  type AgentCreateInput,
  type AgentListQuery,
  type AgentUpdateInput,
} from '../schemas/agent.js';
import { TOKENS } from '../tokens.js';
import { MAX_STEPS } from '../schemas/tools.js';
import { storedMcpServers, type McpServerInput } from '../schemas/mcp.js';
import type { Agent, AgentRecord, Tool } from '../types.js';
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

const hasWebhookTool = (tools: readonly Tool[]) => tools.some((tool) => tool.kind === 'webhook');

/** A page of agents: `page` and `limit` echo the (defaulted) query, `total` counts all matches. */
export interface AgentList {
  agents: Agent[];
  total: number;
  page: number;
  limit: number;
}

/**
 * Agents of a workspace. Every method takes the {@link WorkspaceScope} first, passed on to every port
 * call; another workspace's agent is `not_found`. Inputs are validated with the schemas of
 * `schemas/agent.ts` (`validation_failed` on failure, nothing changed).
 */
@injectable()
export class AgentService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    // The core's schemas: their `model` picklist holds the configured model names (createCore `models`).
    @inject(TOKENS.agentSchemas) private readonly schemas: AgentSchemas,
    // Webhook tools' URLs are checked like webhook endpoints' (docs/events-and-webhooks.md#targets).
    @inject(TOKENS.webhookTargets) private readonly targets: WebhookTargetPolicy,
  ) {
    // Required, with no lenient default: a replacement that does not pass them on fails at
    // `createCore` instead of accepting any model and any tool URL (docs/architecture.md).
    if (!schemas || !targets) {
      throw new TypeError('AgentService: expected its agent schemas and webhook target policy.');
    }
  }

  /**
   * Creates an `active` agent, recording `agent.created` with it. With a webhook tool, the agent
   * gets the given `toolsSecret` or a generated one, returned in this response only.
   * @throws ParleyError `validation_failed` (also a webhook tool's URL refused as a target)
   */
  async create(scope: WorkspaceScope, input: AgentCreateInput): Promise<AgentWithToolsSecret> {
    const fields = parse(this.schemas.create, input);
    await this.checkToolTargets(scope, fields.tools, fields.mcpServers);
    const mcp = storedMcpServers(fields.mcpServers ?? []);
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
      tools: fields.tools ?? [],
      maxSteps: fields.maxSteps ?? MAX_STEPS.default,
      autoReply: fields.autoReply ?? true,
      mcpServers: mcp.mcpServers,
      status: 'active',
      createdAt: now,
      updatedAt: now,
    };
    const toolsSecret = fields.toolsSecret ?? (hasWebhookTool(agent.tools) ? generateWebhookSecret() : undefined);
    const shown: AgentWithToolsSecret = toolsSecret === undefined ? agent : { ...agent, toolsSecret };
    // MCP header values are stored beside the servers, hidden: never in a response or an event.
    const record: AgentRecord =
      Object.keys(mcp.mcpHeaders).length > 0 ? { ...shown, mcpHeaders: mcp.mcpHeaders } : shown;
    const event = domainEvent(this.ids, this.clock, scope.workspaceId, 'agent.created', agent);
    await this.storage.agents.insert(scope, record, { event });
    return withVersion(shown, 1);
  }

  /** @throws ParleyError `not_found` */
  async get(scope: WorkspaceScope, id: string): Promise<Agent> {
    const agent = await this.storage.agents.get(scope, id);
    if (!agent) throw ParleyError.notFound('agent', id);
    return agentView(agent);
  }

  /** Newest first; `page` ≥ 1 (default 1), `limit` 1–100 (default 20), optional `status`. */
  async list(scope: WorkspaceScope, query: AgentListQuery = {}): Promise<AgentList> {
    const { page, limit, status } = parse(AgentListQuerySchema, query);
    const { items, total } = await this.storage.agents.list(scope, { offset: (page - 1) * limit, limit, status });
    return { agents: items.map(agentView), total, page, limit };
  }

  /**
   * Applies the given fields (`null` clears an optional one; `configuration` and `tools` are replaced whole),
   * moves `updatedAt` to now (never backwards) and emits `agent.updated`. An empty patch changes
   * nothing and emits nothing. The store merges the fields into the agent as stored, in one atomic
   * step (ports/storage.ts `Change`), so concurrent PATCHes of different fields all survive. With
   * `conditions.ifMatch`, the agent is changed only while its {@link entityTag} matches, decided in
   * that same step.
   * @throws ParleyError `validation_failed`, `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async update(
    scope: WorkspaceScope,
    id: string,
    input: AgentUpdateInput,
    conditions: WriteConditions = {},
  ): Promise<AgentWithToolsSecret> {
    const { toolsSecret: given, mcpServers, ...rest } = givenFields(parse(this.schemas.update, input));
    await this.checkToolTargets(scope, rest.tools, mcpServers);
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    // A new list of MCP servers replaces the header values too (`{}`: none).
    const changes: Partial<AgentRecord> =
      mcpServers === undefined ? rest : { ...rest, ...storedMcpServers(mcpServers) };
    const set: Partial<AgentRecord> = given === undefined ? changes : { ...changes, toolsSecret: given };
    if (Object.keys(set).length === 0) {
      const agent = await this.get(scope, id);
      if (!versionMatches(ifVersion, agent)) throw preconditionFailed(agent);
      return agent;
    }
    // An agent that gets a webhook tool and has no tools secret gets a generated one, stored in the
    // same step as the change only while it still has none (a concurrent write may give it one).
    let generated: string | undefined;
    if (given === undefined && rest.tools !== undefined && hasWebhookTool(rest.tools)) {
      const current = await this.storage.agents.get(scope, id);
      if (current && current.toolsSecret === undefined) generated = generateWebhookSecret();
    }
    const apply = (secret: string | undefined) =>
      this.storage.agents.update(scope, id, {
        set: secret === undefined ? set : { ...set, toolsSecret: secret },
        ...(secret !== undefined && { where: [{ field: 'toolsSecret', equals: null }] }),
        touch: isoTimestamp(this.clock.now()),
        ifVersion,
        event: this.draft(scope, 'agent.updated'),
      });
    let result = await apply(generated);
    if (
      generated !== undefined &&
      result?.outcome === 'unmet' &&
      result.record.toolsSecret !== undefined &&
      versionMatches(ifVersion, result.record)
    ) {
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

  /**
   * Host names are resolved with `scope`, so only once the request is admitted (docs/rate-limits.md#one-round-trip).
   * @throws ParleyError `validation_failed` at `tools.N.url` / `mcpServers.N.url` when a webhook tool's or an
   *   MCP server's URL is refused as a target (docs/events-and-webhooks.md#targets).
   */
  private async checkToolTargets(
    scope: WorkspaceScope,
    tools: readonly Tool[] | undefined,
    mcpServers: readonly McpServerInput[] | undefined,
  ): Promise<void> {
    if (!tools?.length && !mcpServers?.length) return;
    const targets = [
      ...(tools ?? []).map((tool, index) => ({ url: tool.url, path: `tools.${index}.url` })),
      ...(mcpServers ?? []).map((server, index) => ({ url: server.url, path: `mcpServers.${index}.url` })),
    ];
    const refusals = await Promise.all(targets.map(({ url }) => (url ? this.targets.refusal(scope, url) : null)));
    const issues = refusals.flatMap((refusal, index) =>
      refusal === null ? [] : [{ path: targets[index]!.path, message: refusal }],
    );
    if (issues.length > 0) throw validationFailed(issues);
  }

  /**
   * Deletes the agent with its conversations and their messages; emits only `agent.deleted`
   * (docs/api.md#resources). Returns the deleted agent. With `conditions.ifMatch`, deletes only while the
   * agent's {@link entityTag} matches, checked in the same atomic step as the removal.
   * @throws ParleyError `invalid_request` (malformed `ifMatch`), `not_found`, `precondition_failed`
   */
  async delete(scope: WorkspaceScope, id: string, conditions: WriteConditions = {}): Promise<Agent> {
    const ifVersion = ifMatchVersions(conditions.ifMatch, id);
    const result = await this.storage.agents.delete(scope, id, {
      event: this.draft(scope, 'agent.deleted'),
      ifVersion,
    });
    if (!result) throw ParleyError.notFound('agent', id);
    if (result.outcome === 'unmet') throw preconditionFailed(agentView(result.record));
    return agentView(result.record);
  }

  private draft(scope: WorkspaceScope, type: 'agent.updated' | 'agent.deleted') {
    return eventDraft(this.ids, this.clock, scope.workspaceId, type);
  }
}
