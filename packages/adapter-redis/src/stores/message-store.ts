/** @module Messages on Redis: per conversation, a HASH of records and a ZSET of ids (score 0). */
import { usageDay, usageIncrements, type Admission, type DomainEvent, type Message, type MessagePage, type MessageStore, type UsageRecord } from '@parley/core';
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
export class RedisMessageStore implements MessageStore {
  private readonly appends: TurnBatcher<Append, ScriptReply>;

  constructor(private readonly log: EventLog) {
    this.appends = new TurnBatcher(log.runner, (appends) => this.send(appends));
  }

  private get runner() {
    return this.log.runner;
  }

  async append(workspaceId: string, message: Message, event: DomainEvent, usage?: UsageRecord, admission?: Admission): Promise<'appended' | 'conversation_not_found' | 'conversation_completed'> {
    // The outbox's registry must list the workspace before its first event (EventLog.write).
    await this.log.register(workspaceId);
    const { conversationId } = message;
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    const append: Append = {
      workspaceId,
      msg: keys.msg(conversationId),
      msgs: keys.msgs(conversationId),
      usage: keys.usage(usageDay(message.createdAt)),
      eventsOfType: keys.eventsOfType(event.type),
      conversationId,
      id: message.id,
      stored: JSON.stringify(message),
      at: JSON.stringify(message.createdAt),
      increments: usage ? JSON.stringify(usageIncrements(usage).flatMap(([field, increment]) => [field, String(increment)])) : '',
      eventId: event.id,
      eventHead: eventHead(event, workspaceId),
      // The event's data is the message as a rule: then the script uses the message's JSON for it.
      eventData: event.data === message ? '' : JSON.stringify(eventData(event.data)),
      gate: this.runner.gateFor(admission, keys.conv),
    };
    let reply: ScriptReply;
    try {
      reply = await this.appends.add(workspaceId, append);
    } catch (error) {
      if (append.gate) admission!.fail();
      throw error;
    }
    return (append.gate ? this.runner.settle(admission!, append.gate, reply) : reply) as 'appended' | 'conversation_not_found' | 'conversation_completed';
  }

  /** Sends one workspace's appends of this turn as one {@link MESSAGE_APPEND}; resolves with each one's reply. */
  private async send(appends: Append[]): Promise<ScriptReply[]> {
    const { workspaceId } = appends[0]!;
    const keys = workspaceKeys(this.runner.prefix, workspaceId);
    const each = <N extends keyof Append>(name: N) => appends.map((append) => append[name]);
    const gates = appends.map((append) => append.gate);
    const reply = (await this.runner.script(MESSAGE_APPEND, {
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
        gateNow: gates.map((gate) => gate?.nowMs ?? ''),
        gateInterval: gates.map((gate) => gate?.intervalMs ?? ''),
        gateLimit: gates.map((gate) => gate?.limit ?? ''),
        gateOpen: gates.map((gate) => (gate === undefined ? '' : gate.failOpen ? '1' : '0')),
      },
    })) as ScriptReply[];
    this.log.written(workspaceId, reply[0], reply[1]);
    return reply.slice(2);
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
