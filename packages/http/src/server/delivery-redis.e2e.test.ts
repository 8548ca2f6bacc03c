/**
 * @module End to end on Redis and on PostgreSQL: a `parley serve` killed with SIGKILL under 50
 * concurrent writers while the receiver is down loses no event (a fresh process delivers every
 * event of every stored change once the receiver is up, and none for a change not stored); two
 * `parley worker` processes share one queue without sending an event twice when every attempt
 * succeeds.
 */
import { afterAll, expect, it } from 'vitest';
import { startReceiver, type ReceivedWebhook, type Receiver } from '@parley/core/testing';
import { apiFor } from '../test-support/api-client.js';
import { freeRedisPort } from '../test-support/redis.js';
import { startServerProcess, type ServerProcess } from '../test-support/server-process.js';
import { sharedBackends } from '../test-support/shared-backends.js';

const KEY = 'delivery-redis-e2e-key-0123456789';
const agentInput = { name: 'Ada', description: 'Answers', model: 'modelA-4' };

/** Every page of a cursor-paged list. */
async function all<T>(fetchPage: (cursor?: string) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    cursor = page.next;
  } while (cursor !== undefined);
  return items;
}

async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

for (const backend of await sharedBackends())
  backend.describe(`webhook delivery on ${backend.name}`, () => {
    const processes: ServerProcess[] = [];
    const receivers: Receiver[] = [];
    afterAll(async () => {
      await Promise.all(processes.map((running) => running.stop('SIGKILL')));
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await backend.cleanup();
    });

    async function envFor(label: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
      return {
        ...(await backend.fresh(label)),
        API_KEYS: JSON.stringify([{ key: KEY, workspace: 'acme', plan: 'enterprise', limitPerHour: 1_000_000 }]),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        ...extra,
      };
    }

    async function start(env: Record<string, string>, command: 'serve' | 'worker' = 'serve'): Promise<ServerProcess> {
      const running = await startServerProcess(env, command);
      processes.push(running);
      return running;
    }

    it(
      'kill -9 under 50 writers with the receiver down loses no event, and invents none',
      { timeout: 150_000 },
      async () => {
        // Retries every second for a minute: the receiver stays down for a few seconds, and jobs the
        // killed process had leased come back when their 30 s lease ends.
        const env = await envFor('delivery-kill', {
          WEBHOOK_RETRY_DELAYS: Array.from({ length: 60 }, () => '1').join(','),
        });
        const port = await freeRedisPort();
        const url = `http://127.0.0.1:${port}/webhooks`;
        const first = await start(env);
        const call = apiFor(first.base, KEY);
        await call(
          'POST',
          '/api/webhooks',
          { url, events: ['agent.created', 'conversation.started', 'message.sent', 'message.received'] },
          201,
        );

        let stop = false;
        const writer = async () => {
          while (!stop) {
            try {
              const agent = await call('POST', '/api/agents', agentInput, 201);
              const conversation = await call('POST', '/api/conversations', { agentId: agent.id }, 201);
              await call(
                'POST',
                `/api/conversations/${conversation.id}/messages`,
                { role: 'user', content: 'Hi' },
                201,
              );
              await call(
                'POST',
                `/api/conversations/${conversation.id}/messages`,
                { role: 'assistant', content: 'Hello' },
                201,
              );
            } catch {
              return; // the server is gone
            }
          }
        };
        const writers = Array.from({ length: 50 }, writer);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await first.stop('SIGKILL');
        stop = true;
        await Promise.all(writers);

        const second = await start(env);
        const read = apiFor(second.base, KEY);
        const receiver = await startReceiver(port);
        receivers.push(receiver);

        // Every change readable now, and the event the log holds for it.
        const agents = await all(async (cursor) => {
          const page = Number(cursor ?? 1);
          const body = await read('GET', `/api/agents?limit=100&page=${page}`, undefined, 200);
          return {
            items: body.agents as Array<{ id: string }>,
            ...(page * 100 < body.total && { next: String(page + 1) }),
          };
        });
        const conversations = await all(async (cursor) => {
          const page = Number(cursor ?? 1);
          const body = await read('GET', `/api/conversations?limit=100&page=${page}`, undefined, 200);
          return {
            items: body.conversations as Array<{ id: string }>,
            ...(page * 100 < body.total && { next: String(page + 1) }),
          };
        });
        const messages: Array<{ id: string; role: string }> = [];
        for (const conversation of conversations) {
          messages.push(
            ...(await all<{ id: string; role: string }>(async (cursor) => {
              const body = await read(
                'GET',
                `/api/conversations/${conversation.id}/messages?limit=100${cursor ? `&before=${cursor}` : ''}`,
                undefined,
                200,
              );
              return { items: body.messages, ...(body.nextCursor && { next: body.nextCursor }) };
            })),
          );
        }
        const events = await all<{ id: string; type: string; data: { id: string } }>(async (cursor) => {
          const body = await read('GET', `/api/events?limit=100${cursor ? `&after=${cursor}` : ''}`, undefined, 200);
          return {
            items: body.events as Array<{ id: string; type: string; data: { id: string } }>,
            ...(body.nextCursor && { next: body.nextCursor }),
          };
        });
        expect(agents.length).toBeGreaterThan(10);
        const expected = new Map<string, string>(); // `${type} ${resource id}` → event id
        for (const event of events) expected.set(`${event.type} ${event.data.id}`, event.id);
        // No stored change without its event.
        for (const agent of agents) expect(expected.has(`agent.created ${agent.id}`)).toBe(true);
        for (const conversation of conversations)
          expect(expected.has(`conversation.started ${conversation.id}`)).toBe(true);
        for (const message of messages)
          expect(
            expected.has(`${message.role === 'assistant' ? 'message.received' : 'message.sent'} ${message.id}`),
          ).toBe(true);
        expect(expected.size).toBe(agents.length + conversations.length + messages.length);

        const arrived = () => new Set(receiver.received.map((received) => received.id));
        await waitUntil(
          () => [...expected.values()].every((id) => arrived().has(id)),
          120_000,
          () =>
            `${[...expected.values()].filter((id) => !arrived().has(id)).length} of ${expected.size} events not delivered`,
        );
        // Nothing for a change that was not stored, and a duplicate carries its event's id.
        const known = new Set(expected.values());
        const byResource = new Map<string, Set<string>>();
        for (const received of receiver.received as ReceivedWebhook[]) {
          expect(known.has(received.id)).toBe(true);
          const resource = `${received.json.type} ${String(received.json.data.id)}`;
          expect(expected.get(resource)).toBe(received.id);
          byResource.set(resource, (byResource.get(resource) ?? new Set()).add(received.id));
        }
        for (const ids of byResource.values()) expect(ids.size).toBe(1);
      },
    );

    it(
      'two parley worker processes share one queue: every event once when every attempt succeeds',
      { timeout: 60_000 },
      async () => {
        const env = await envFor('delivery-workers', { DELIVERY_WORKER: 'false', WEBHOOK_RETRY_DELAYS: '1,1,1' });
        const receiver = await startReceiver();
        receivers.push(receiver);
        const server = await start(env);
        await Promise.all([start(env, 'worker'), start(env, 'worker')]);
        const call = apiFor(server.base, KEY);
        const hook = await call('POST', '/api/webhooks', { url: receiver.url, events: ['agent.created'] }, 201);
        // Ten at a time: the pool's wait for a connection (1 s) would answer 503 to part of a
        // burst of 100 on a busy machine, which is load shedding, not what this test is about.
        const created: { id: string }[] = [];
        for (let batch = 0; batch < 10; batch++)
          created.push(
            ...(await Promise.all(Array.from({ length: 10 }, () => call('POST', '/api/agents', agentInput, 201)))),
          );
        await receiver.waitFor(100, 30_000);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(receiver.received).toHaveLength(100);
        expect(new Set(receiver.received.map((received) => received.json.data.id))).toEqual(
          new Set(created.map((agent: { id: string }) => agent.id)),
        );
        // The log agrees: 100 first attempts, all 2xx.
        const log = await call('GET', `/api/webhooks/${hook.id}/deliveries?limit=100`, undefined, 200);
        expect(
          log.deliveries.every(
            (entry: { attempt: number; status: number }) => entry.attempt === 1 && entry.status === 200,
          ),
        ).toBe(true);
        expect(log.hasMore).toBe(false);
      },
    );
  });
