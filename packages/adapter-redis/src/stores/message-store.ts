/** @module Messages on Redis: per conversation, a HASH of records and a ZSET of ids (score 0). */
import { usageDay, usageIncrements, type Admission, type DomainEvent, type EventDraft, type Message, type MessagePage, type MessageStore, type UsageRecord } from '@parley/core';
import { workspaceKeys } from '../keys.js';
import { records, strings } from '../script.js';
import type { EventLog } from './event-log.js';
import { MESSAGE_APPEND, MESSAGE_PAGE } from './message-store.lua.js';

/** `event` as a draft (its `data` left out), for the script to complete. */
function withoutData({ data: _data, ...draft }: DomainEvent): EventDraft {
  return draft;
}

/** How long a day's usage counters are kept after its last reply: 400 days. */
export const USAGE_TTL_SECONDS = 400 * 86_400;

/**
 * {@link MessageStore} on Redis. `append` and `page` are one Lua script each, so one round trip
 * (`page` checks the conversation in the same script when asked to); a page is O(log n + limit)
 * whatever the history's length (see message-store.lua.ts).
 */
export class RedisMessageStore implements MessageStore {
  constructor(private readonly log: EventLog) {}

  private get runner() {
    return this.log.runner;
  }

  async append(workspaceId: string, message: Message, event: DomainEvent, usage?: UsageRecord, admission?: Admission): Promise<'appended' | 'conversation_not_found' | 'conversation_completed'> {
    const { conversationId } = message;
    const stored = JSON.stringify(message);
    const reply = await this.log.write(
      MESSAGE_APPEND,
      workspaceId,
      (keys) => ({
        keys: { conv: keys.conv, msg: keys.msg(conversationId), msgs: keys.msgs(conversationId), usage: keys.usage(usageDay(message.createdAt)) },
        args: {
          conversationId,
          id: message.id,
          stored,
          at: JSON.stringify(message.createdAt),
          usageTtl: USAGE_TTL_SECONDS,
          increments: usage ? usageIncrements(usage).flatMap(([field, increment]) => [field, String(increment)]) : [],
        },
      }),
      // The event's data is the message as a rule: then the script uses the message's JSON for it.
      event.data === message ? withoutData(event) : event,
      admission,
    );
    return reply as 'appended' | 'conversation_not_found' | 'conversation_completed';
  }

  async get(workspaceId: string, conversationId: string, id: string, admission?: Admission): Promise<Message | null> {
    const raw = await this.runner.hget(workspaceKeys(this.runner.prefix, workspaceId).msg(conversationId), id, admission);
    return raw === null ? null : (JSON.parse(raw) as Message);
  }

  async page(
    workspaceId: string,
    conversationId: string,
    { before, after, limit, requireConversation }: { before?: string; after?: string; limit: number; requireConversation?: boolean },
    admission?: Admission,
  ): Promise<MessagePage | null> {
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    const reply = await this.runner.script(MESSAGE_PAGE, {
      keys: { msgs: keys.msgs(conversationId), msg: keys.msg(conversationId), conv: keys.conv },
      args: {
        hasBefore: before === undefined ? '0' : '1',
        before: before ?? '',
        hasAfter: after === undefined ? '0' : '1',
        after: after ?? '',
        limit,
        requireConversation: requireConversation ? '1' : '0',
        conversationId,
      },
    }, admission);
    if (reply === null) return null;
    const [more, ...rows] = strings(reply);
    // Without `after` the script reads newest first (REV); a page is listed oldest first.
    const messages = records<Message>(rows);
    return { messages: after === undefined ? messages.reverse() : messages, hasMore: more === '1' };
  }
}
