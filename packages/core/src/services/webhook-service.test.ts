/** @module WebhookService on the memory adapters: registration, secrets, updates and validation. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, ParleyError, type WebhookCreateInput, type WebhookEndpoint } from '../index.js';
import { ManualClock } from '../testing/clock.js';

const START = '2026-01-01T00:00:00.000Z';
const MARK = 'Zq9-SUBMITTED-VALUE';
const base: WebhookCreateInput = { url: 'https://hooks.example.com/parley', events: ['agent.created', 'message.sent'] };
/** `whsec_` + base64 of 32 bytes. */
const GIVEN_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

function setup() {
  const adapters = memoryAdapters();
  const clock = new ManualClock(Date.parse(START));
  const core = createCore({ ...adapters, clock });
  const stored = async (id: string) => (await core.storage.webhookEndpoints.get('ws1', id))!;
  return { core, clock, stored, events: () => adapters.events.events() };
}

async function rejection(promise: Promise<unknown>): Promise<ParleyError> {
  const error = await promise.then(
    () => new Error('Expected a rejection, but the promise resolved.'),
    (reason: unknown) => reason,
  );
  if (error instanceof ParleyError) return error;
  throw error;
}

describe('WebhookService', () => {
  it('registers an enabled endpoint and returns a generated whsec_ secret once, never again', async () => {
    const { core, stored, events } = setup();
    const created = await core.webhooks.create('ws1', base);
    const { secret, ...endpoint } = created;
    expect(endpoint).toEqual({ id: created.id, url: base.url, events: base.events, enabled: true, createdAt: START, updatedAt: START });
    expect(created.id).toMatch(/^wh_[0-9A-Z]{26}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect((await stored(created.id)).secret).toBe(secret);
    expect((await core.webhooks.create('ws1', base)).secret).not.toBe(secret);

    const reads = [
      await core.webhooks.get('ws1', created.id),
      (await core.webhooks.list('ws1')).webhooks[1],
      await core.webhooks.update('ws1', created.id, { enabled: false }),
    ];
    for (const read of reads) {
      expect(read).toBeDefined();
      expect('secret' in read!).toBe(false);
      expect(JSON.stringify(read)).not.toContain(secret!.slice(6, 30));
    }
    expect(events()).toEqual([]);
  });

  it('stores a given secret, whsec_ or raw, without echoing it', async () => {
    const { core, stored } = setup();
    for (const secret of [GIVEN_SECRET, 'a raw secret of 16+ chars']) {
      const created = await core.webhooks.create('ws1', { ...base, secret });
      expect('secret' in created).toBe(false);
      expect(JSON.stringify(created)).not.toContain(secret);
      expect((await stored(created.id)).secret).toBe(secret);
    }
  });

  it('refuses invalid secrets, urls and events with validation_failed, without echoing them', async () => {
    const { core } = setup();
    const inputs: Array<[Partial<Record<keyof WebhookCreateInput | 'enabled', unknown>>, string]> = [
      [{ secret: `whsec_${MARK}!!` }, 'secret'],
      [{ secret: `whsec_${Buffer.from(MARK).toString('base64')}` }, 'secret'],
      [{ secret: `whsec_${Buffer.alloc(65, 1).toString('base64')}` }, 'secret'],
      [{ secret: `whsec_${Buffer.alloc(32, 1).toString('base64').slice(0, -2)}` }, 'secret'],
      [{ secret: 'short' }, 'secret'],
      [{ secret: MARK.repeat(30) }, 'secret'],
      [{ url: `ftp://${MARK}.example.com/` }, 'url'],
      [{ url: `not a url ${MARK}` }, 'url'],
      [{ url: `https://user:${MARK}@example.com/` }, 'url'],
      [{ url: `https://example.com/${MARK}${'p'.repeat(2048)}` }, 'url'],
      [{ url: undefined }, 'url'],
      [{ events: [] }, 'events'],
      [{ events: ['agent.created', 'agent.created'] }, 'events'],
      [{ events: [MARK] }, 'events.0'],
      [{ events: 'agent.created' }, 'events'],
      [{ enabled: false }, 'enabled'],
    ];
    for (const [fields, path] of inputs) {
      const error = await rejection(core.webhooks.create('ws1', { ...base, ...fields } as never));
      expect(error.code, path).toBe('validation_failed');
      expect((error.details?.['issues'] as Array<{ path: string }>).map((issue) => issue.path), path).toEqual([path]);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(MARK);
    }
    for (const body of [undefined, null, 'https://hooks.example.com', []]) {
      const error = await rejection(core.webhooks.create('ws1', body as never));
      expect([error.code, (error.details?.['issues'] as Array<{ path: string }>)[0]?.path]).toEqual(['validation_failed', '']);
    }
    expect((await core.webhooks.list('ws1')).total).toBe(0);
  });

  it('updates url, events, secret and enabled; bumps updatedAt; an empty patch changes nothing', async () => {
    const { core, clock, stored } = setup();
    const created = await core.webhooks.create('ws1', { ...base, secret: GIVEN_SECRET });
    clock.advance(1_000);
    expect(await core.webhooks.update('ws1', created.id, {})).toEqual(created);
    const newSecret = 'another raw secret, long enough';
    const updated = await core.webhooks.update('ws1', created.id, {
      url: 'https://other.example.com/hook',
      events: ['conversation.completed'],
      secret: newSecret,
      enabled: false,
    });
    expect(updated).toEqual({ ...created, url: 'https://other.example.com/hook', events: ['conversation.completed'], enabled: false, updatedAt: '2026-01-01T00:00:01.000Z' });
    expect(await stored(created.id)).toEqual({ ...updated, secret: newSecret });
    const unchanged = await core.webhooks.update('ws1', created.id, { secret: undefined, enabled: undefined });
    expect(unchanged).toEqual(updated);
    expect(await stored(created.id)).toEqual({ ...updated, secret: newSecret });
    expect((await rejection(core.webhooks.update('ws1', created.id, { secret: 'whsec_###' }))).code).toBe('validation_failed');
    expect((await rejection(core.webhooks.update('ws1', created.id, { id: 'wh_x' } as never))).code).toBe('validation_failed');
    expect((await stored(created.id)).secret).toBe(newSecret);
  });

  it('lists newest first, paged, within the workspace; deletes once', async () => {
    const { core, clock } = setup();
    const made: WebhookEndpoint[] = [];
    for (let index = 0; index < 3; index += 1) {
      clock.advance(1);
      const { secret: _secret, ...endpoint } = await core.webhooks.create('ws1', base);
      made.unshift(endpoint);
    }
    expect(await core.webhooks.list('ws1')).toEqual({ webhooks: made, total: 3, page: 1, limit: 20 });
    expect(await core.webhooks.list('ws1', { page: '2', limit: '2' })).toEqual({ webhooks: made.slice(2), total: 3, page: 2, limit: 2 });
    expect(await core.webhooks.list('ws2')).toEqual({ webhooks: [], total: 0, page: 1, limit: 20 });
    for (const query of [{ page: 0 }, { limit: 101 }, { enabled: true }]) {
      expect((await rejection(core.webhooks.list('ws1', query as never))).code).toBe('validation_failed');
    }
    const foreign = [
      () => core.webhooks.get('ws2', made[0]!.id),
      () => core.webhooks.update('ws2', made[0]!.id, { enabled: false }),
      () => core.webhooks.delete('ws2', made[0]!.id),
    ];
    for (const call of foreign) {
      expect((await rejection(call())).code).toBe('not_found');
    }
    await core.webhooks.delete('ws1', made[0]!.id);
    expect((await rejection(core.webhooks.get('ws1', made[0]!.id))).code).toBe('not_found');
    expect((await rejection(core.webhooks.delete('ws1', made[0]!.id))).code).toBe('not_found');
    expect(await core.webhooks.list('ws1')).toMatchObject({ webhooks: made.slice(1), total: 2 });
  });
});
