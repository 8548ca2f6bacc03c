/** @module Messages on Redis: per conversation, a HASH of records and a ZSET of ids (score 0). */
import type { Message, MessagePage, MessageStore } from '@parley/core';
import type { RedisRunner } from '../connection.js';
import { workspaceKeys } from '../keys.js';
import { MESSAGE_APPEND, MESSAGE_PAGE } from '../scripts/messages.js';
import { records, strings } from '../scripts/script.js';

/**
 * {@link MessageStore} on Redis. `append` and `page` are one Lua script each, so one round trip;
 * a page is O(log n + limit) whatever the history's length (see scripts/messages.ts).
 */
export class RedisMessageStore implements MessageStore {
  constructor(private readonly runner: RedisRunner) {}

  private keys(workspaceId: string) {
    return workspaceKeys(this.runner.prefix, workspaceId);
  }

  async append(workspaceId: string, message: Message): Promise<boolean> {
    const keys = this.keys(workspaceId);
    const { conversationId } = message;
    const reply = await this.runner.script(
      MESSAGE_APPEND,
      [keys.conv, keys.msg(conversationId), keys.msgs(conversationId)],
      [conversationId, message.id, JSON.stringify(message)],
    );
    return reply === 1;
  }

  async page(workspaceId: string, conversationId: string, { before, limit }: { before?: string; limit: number }): Promise<MessagePage | null> {
    const keys = this.keys(workspaceId);
    const reply = await this.runner.script(
      MESSAGE_PAGE,
      [keys.msgs(conversationId), keys.msg(conversationId)],
      before === undefined ? ['0', '', limit] : ['1', before, limit],
    );
    if (reply === null) return null;
    const [more, ...rows] = strings(reply);
    // The script reads newest first (REV); a page is listed oldest first.
    return { messages: records<Message>(rows).reverse(), hasMore: more === '1' };
  }
}
