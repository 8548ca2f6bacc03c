/** @module Messages on Redis: per conversation, a HASH of records and a ZSET of ids (score 0). */
import type { DomainEvent, Message } from '@parley/core';
import {
  traceContextOf,
  usageDay,
  usageIncrements,
  type WorkspaceScope,
  type MessagePage,
  type MessageStore,
  type UsageRecord,
} from '@parley/core/adapter';
import { workspaceKeys } from '../keys.js';
import { records, strings, type Gate, type ScriptReply } from '../script.js';
import { TurnBatcher } from '../turn-batcher.js';
import { eventData, eventHead, recordingKeys, type EventLog } from './event-log.js';
import { MESSAGE_APPEND, MESSAGE_PAGE } from './message-store.lua.js';

/** How long a day's usage counters are kept after its last reply: 400 days. */
export const USAGE_TTL_SECONDS = 400 * 86_400;

/** One append waiting for its turn's script: the keys and args of its part of {@link MESSAGE_APPEND}. */
interface Append {
  workspaceId: string;
  msg: string;
  msgs: string;
  usage: string;
  eventsOfType: string;
  conversationId: string;
  id: string;
  stored: string;
  at: string;
  increments: string;
  eventId: string;
  eventHead: string;
  eventData: string;
  /** The W3C trace context of the append ('' for none), kept with the event's outbox entry. */
  eventTrace: string;
  /** The request's rate-limit hit, when this append decides it. */
  gate: Gate | undefined;
}

/**
 * {@link MessageStore} on Redis. `append` and `page` are one Lua script each, so one round trip
 * (`page` checks the conversation in the same script when asked to); a page is O(log n + limit)
 * whatever the history's length (see message-store.lua.ts). The appends made in one turn of the
 * event loop to one workspace share their script (`TurnBatcher`, sent when the turn's other
 * commands leave, so no append waits longer): under load, Redis then runs each conversation's
 * HGET and HSET, its history's HSET and ZADD, the events' commands and the rate-limit state's GET
 * and SET once for several messages instead of once each.
 */
export function messageStore(log: EventLog): MessageStore {
  const { runner } = log;
  const batches = new TurnBatcher<Append, ScriptReply>(runner, send);

  /** Sends one workspace's appends of this turn as one {@link MESSAGE_APPEND}; resolves with each one's reply. */
  async function send(appends: Append[]): Promise<ScriptReply[]> {
    const { workspaceId } = appends[0]!;
    const keys = workspaceKeys(runner.prefix, workspaceId);
    const each = <N extends keyof Append>(name: N) => appends.map((append) => append[name]);
    const gates = appends.map((append) => append.gate);
    const reply = (await runner.script(MESSAGE_APPEND, {
      keys: {
        conv: keys.conv,
        ...recordingKeys(keys),
        rateLimit: keys.rateLimit,
        msg: each('msg'),
        msgs: each('msgs'),
        usage: each('usage'),
        eventsOfType: each('eventsOfType'),
      },
      args: {
        usageTtl: USAGE_TTL_SECONDS,
        conversationId: each('conversationId'),
        id: each('id'),
        stored: each('stored'),
        at: each('at'),
        increments: each('increments'),
        eventId: each('eventId'),
        eventHead: each('eventHead'),
        eventData: each('eventData'),
        eventTrace: each('eventTrace'),
        gateNow: gates.map((gate) => gate?.nowMs ?? ''),
        gateInterval: gates.map((gate) => gate?.intervalMs ?? ''),
        gateLimit: gates.map((gate) => gate?.limit ?? ''),
        gateOpen: gates.map((gate) => (gate === undefined ? '' : gate.failOpen ? '1' : '0')),
      },
    })) as ScriptReply[];
    log.written(workspaceId, reply[0], reply[1]);
    return reply.slice(2);
  }

  return {
    async append(
      scope: WorkspaceScope,
      message: Message,
      { event, usage }: { event: DomainEvent; usage?: UsageRecord },
    ): Promise<'appended' | 'conversation_not_found' | 'conversation_completed'> {
      // Read in the caller's context, before anything is awaited.
      const eventTrace = traceContextOf(scope) ?? '';
      // The outbox's registry must list the workspace before its first event (EventLog.write).
      await log.register(scope.workspaceId);
      const { conversationId } = message;
      const keys = workspaceKeys(runner.prefix, scope.workspaceId);
      const append: Append = {
        workspaceId: scope.workspaceId,
        msg: keys.msg(conversationId),
        msgs: keys.msgs(conversationId),
        usage: keys.usage(usageDay(message.createdAt)),
        eventsOfType: keys.eventsOfType(event.type),
        conversationId,
        id: message.id,
        stored: JSON.stringify(message),
        at: JSON.stringify(message.createdAt),
        increments: usage
          ? JSON.stringify(usageIncrements(usage).flatMap(([field, increment]) => [field, String(increment)]))
          : '',
        eventId: event.id,
        eventHead: eventHead(event, scope.workspaceId),
        // The event's data is the message as a rule: then the script uses the message's JSON for it.
        eventData: event.data === message ? '' : JSON.stringify(eventData(event.data)),
        eventTrace,
        gate: runner.gateFor(scope, keys.conv),
      };
      let reply: ScriptReply;
      try {
        reply = await batches.add(scope.workspaceId, append);
      } catch (error) {
        if (append.gate) runner.failed(scope);
        throw error;
      }
      return (append.gate ? runner.settle(scope, append.gate, reply) : reply) as
        'appended' | 'conversation_not_found' | 'conversation_completed';
    },

    async get(scope: WorkspaceScope, conversationId: string, id: string): Promise<Message | null> {
      const raw = await runner.hget(workspaceKeys(runner.prefix, scope.workspaceId).msg(conversationId), id, scope);
      return raw === null ? null : (JSON.parse(raw) as Message);
    },

    async page(
      scope: WorkspaceScope,
      conversationId: string,
      {
        before,
        after,
        limit,
        requireConversation,
      }: { before?: string; after?: string; limit: number; requireConversation?: boolean },
    ): Promise<MessagePage | null> {
      const keys = workspaceKeys(runner.prefix, scope.workspaceId);
      const reply = await runner.script(
        MESSAGE_PAGE,
        {
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
        },
        scope,
      );
      if (reply === null) return null;
      const [more, ...rows] = strings(reply);
      // Without `after` the script reads newest first (REV); a page is listed oldest first.
      const messages = records<Message>(rows);
      return { messages: after === undefined ? messages.reverse() : messages, hasMore: more === '1' };
    },
  };
}
