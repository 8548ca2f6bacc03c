/** @module Agents on Redis: a HASH of records, an index of all agents and one per status. */
import { AGENT_STATUSES, type Agent, type AgentStatus, type AgentStore, type OffsetPage, type PageResult } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { AGENT_DELETE } from '../scripts/cascade.js';
import { INSERT, PAGE, REPLACE } from '../scripts/records.js';
import { pageReply, strings } from '../scripts/script.js';
import { finishCascade } from './cascade.js';

/**
 * {@link AgentStore} on Redis. Every method is one round trip (a command or one Lua script),
 * except `delete`, which is one script to remove the agent atomically and then bounded batches
 * for its conversations (see `finishCascade`). Faults reject with `service_unavailable`.
 */
export class RedisAgentStore implements AgentStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async insert(workspaceId: string, agent: Agent): Promise<void> {
    const keys = this.keys(workspaceId);
    await this.runner.script(INSERT, [keys.agent, keys.agents, keys.agentsByStatus(agent.status)], [agent.id, JSON.stringify(agent)]);
  }

  async get(workspaceId: string, id: string): Promise<Agent | null> {
    const raw = await this.runner.run((client) => client.hget(this.keys(workspaceId).agent, id));
    return raw === null ? null : (JSON.parse(raw) as Agent);
  }

  /** O(log n + limit) by rank in the index; `total` is ZCARD. */
  async list(workspaceId: string, { offset, limit, status }: OffsetPage & { status?: AgentStatus }): Promise<PageResult<Agent>> {
    const keys = this.keys(workspaceId);
    const index = status === undefined ? keys.agents : keys.agentsByStatus(status);
    return pageReply<Agent>(await this.runner.script(PAGE, [index, keys.agent], [offset, limit]));
  }

  async replace(workspaceId: string, agent: Agent): Promise<boolean> {
    const keys = this.keys(workspaceId);
    const leave = AGENT_STATUSES.map((status) => keys.agentsByStatus(status));
    const reply = await this.runner.script(
      REPLACE,
      [keys.agent, ...leave, keys.agentsByStatus(agent.status)],
      [agent.id, JSON.stringify(agent), leave.length],
    );
    return reply === 1;
  }

  /**
   * Removes the agent and its index entries in one atomic script — from then on it cannot be
   * read and no conversation can be inserted for it — then deletes its conversations and messages
   * in bounded batches before resolving. Any cascade an earlier, interrupted delete left pending in
   * the workspace is finished too.
   */
  async delete(workspaceId: string, id: string): Promise<Agent | null> {
    const keys = this.keys(workspaceId);
    const [raw, ...pending] = strings(
      await this.runner.script(AGENT_DELETE, [keys.agent, keys.agents, ...AGENT_STATUSES.map((status) => keys.agentsByStatus(status)), keys.cascades], [id]),
    );
    for (const agentId of pending) await finishCascade(this.runner, workspaceId, agentId);
    return raw ? (JSON.parse(raw) as Agent) : null;
  }
}
