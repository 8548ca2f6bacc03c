/** @module Finishing an agent's cascade delete: its conversations and messages, in bounded batches. */
import { CONVERSATION_STATUSES } from '@parley/core/adapter';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { strings } from '../script.js';
import { CASCADE_NEXT, CASCADE_PURGE } from './cascade.lua.js';
import { parseOwner } from './conversation-store.js';

/**
 * Conversations removed per script. Bounds the work of one script (each conversation is a few
 * ZREMs and one UNLINK, whose freeing happens off the main thread), so other clients wait at most
 * about a millisecond between batches, whatever the agent's size.
 */
export const CASCADE_BATCH = 100;

/** Rounds in a row without progress after which the cascade gives up (a bug, not a fault). */
const MAX_STALLED_ROUNDS = 5;

/**
 * Deletes every conversation of `agentId` (whose agent record is already gone) with its
 * messages: 2 round trips per {@link CASCADE_BATCH} conversations, plus one to finish.
 * Idempotent, so concurrent or resumed runs for the same agent are safe. Conversations record no
 * event: `agent.deleted` stands for the whole cascade.
 * @throws ParleyError `service_unavailable` on a fault (the cascade stays pending and is resumed
 *   by the next agent delete in the workspace).
 */
export async function finishCascade(runner: RedisRunner, workspaceId: string, agentId: string): Promise<void> {
  const keys = workspaceKeys(runner.prefix, workspaceId);
  const indexes = [
    keys.convs,
    ...CONVERSATION_STATUSES.map((status) => keys.convsByStatus(status)),
    keys.convsByAgent(agentId),
    ...CONVERSATION_STATUSES.map((status) => keys.convsByAgent(agentId, status)),
  ];
  let stalled = 0;
  for (;;) {
    const rows = strings(
      await runner.script(CASCADE_NEXT, {
        keys: { agentConvs: keys.convsByAgent(agentId), convOwner: keys.convOwner, cascades: keys.cascades },
        args: { agentId, batch: CASCADE_BATCH },
      }),
    );
    if (rows.length === 0) return;
    const conversationKeys: string[] = [];
    const ids: string[] = [];
    const owners: string[] = [];
    const userKeyCounts: number[] = [];
    for (let i = 0; i < rows.length; i += 2) {
      const [id, owner] = [rows[i]!, rows[i + 1]!];
      // Without an owner (an index entry without a record) there is no user index to leave.
      const userId = owner ? parseOwner(owner).userId : null;
      conversationKeys.push(keys.msg(id), keys.msgs(id));
      const userKeys =
        userId === null
          ? []
          : [keys.convsByUser(userId), ...CONVERSATION_STATUSES.map((status) => keys.convsByUser(userId, status))];
      conversationKeys.push(...userKeys);
      ids.push(id);
      owners.push(owner);
      userKeyCounts.push(userKeys.length);
    }
    const removed = await runner.script(CASCADE_PURGE, {
      keys: { conv: keys.conv, convOwner: keys.convOwner, indexes, conversationKeys },
      args: { ids, owners, userKeyCounts },
    });
    stalled = removed === 0 ? stalled + 1 : 0;
    if (stalled >= MAX_STALLED_ROUNDS) throw new Error(`Cascade delete of agent '${agentId}' makes no progress.`);
  }
}
