/** @module WebhookService on the memory adapters: registration, secrets, updates, validation, targets. */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { createCore, ParleyError, type WebhookCreateInput, type WebhookEndpoint } from '../index.js';
import { ManualClock } from '../testing/clock.js';
import { recordedEvents } from '../test-support/events.js';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { issuePaths, rejection } from '../test-support/errors.js';

const START = '2026-01-01T00:00:00.000Z';
const MARK = 'Zq9-SUBMITTED-VALUE';
const base: WebhookCreateInput = { url: 'https://hooks.example.com/parley', events: ['agent.created', 'message.sent'] };
/** `whsec_` + base64 of 32 bytes. */
const GIVEN_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** A name that resolves to a private address, carrying the mark that must never be echoed. */
const INTERNAL_HOST = `${MARK.toLowerCase()}.internal.example`;

function setup(options: { allowPrivateWebhookUrls?: boolean } = {}) {
  const adapters = memoryAdapters();
  const clock = new ManualClock(Date.parse(START));
  // No network in tests: every name other than INTERNAL_HOST fails to resolve (and is accepted).
  const resolver = new StaticHostResolver({ [INTERNAL_HOST]: ['93.184.215.14', '10.20.30.40'] });
  const core = createCore(adapters, { clock, hostResolver: resolver, ...options });
  const stored = async (id: string) => (await core.storage.webhookEndpoints.get({ workspaceId: 'ws1' }, id))!;
  return { core, clock, stored, resolver, events: () => recordedEvents(adapters.storage) };
}

/** Expects `validation_failed` with one issue at `url`, echoing nothing of the submitted URL. */
function expectRefusedTarget(error: ParleyError, kind: string): void {
  expect(error.code).toBe('validation_failed');
  expect(error.details).toEqual({ issues: [{ path: 'url', message: expect.stringContaining(`${kind} address`) }] });
  expect(error.message).toBe(
    `Validation failed. url: ${(error.details!['issues'] as Array<{ message: string }>)[0]!.message}`,
  );
  expect(JSON.stringify({ message: error.message, details: error.details }).toLowerCase()).not.toContain(
    MARK.toLowerCase(),
  );
}

describe('WebhookService', () => {
  it('registers an enabled endpoint and returns a generated whsec_ secret once, never again', async () => {
    const { core, stored, events } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, base);
    const { secret, ...endpoint } = created;
    expect(endpoint).toEqual({
      id: created.id,
      url: base.url,
      events: base.events,
      enabled: true,
      disabledReason: null,
      createdAt: START,
      updatedAt: START,
    });
    expect(await stored(created.id)).toEqual({ ...endpoint, secret, previousSecrets: [], failingSince: null });
    expect(created.id).toMatch(/^wh_[0-9A-Z]{26}$/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect((await stored(created.id)).secret).toBe(secret);
    expect((await core.webhooks.create({ workspaceId: 'ws1' }, base)).secret).not.toBe(secret);

    const reads = [
      await core.webhooks.get({ workspaceId: 'ws1' }, created.id),
      (await core.webhooks.list({ workspaceId: 'ws1' })).webhooks[1],
      await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { enabled: false }),
    ];
    for (const read of reads) {
      expect(read).toBeDefined();
      expect('secret' in read!).toBe(false);
      expect(JSON.stringify(read)).not.toContain(secret!.slice(6, 30));
    }
    expect(await events()).toEqual([]);
  });

  it('stores a given secret, whsec_ or raw, without echoing it', async () => {
    const { core, stored } = setup();
    for (const secret of [GIVEN_SECRET, 'a raw secret of 16+ chars']) {
      const created = await core.webhooks.create({ workspaceId: 'ws1' }, { ...base, secret });
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
      [{ events: ['*', 'agent.created'] }, 'events'],
      [{ events: [MARK] }, 'events.0'],
      [{ events: 'agent.created' }, 'events'],
      [{ enabled: false }, 'enabled'],
    ];
    for (const [fields, path] of inputs) {
      const error = await rejection(core.webhooks.create({ workspaceId: 'ws1' }, { ...base, ...fields } as never));
      expect(error.code, path).toBe('validation_failed');
      expect(
        (error.details?.['issues'] as Array<{ path: string }>).map((issue) => issue.path),
        path,
      ).toEqual([path]);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(MARK);
    }
    for (const body of [undefined, null, 'https://hooks.example.com', []]) {
      const error = await rejection(core.webhooks.create({ workspaceId: 'ws1' }, body as never));
      expect([error.code, (error.details?.['issues'] as Array<{ path: string }>)[0]?.path]).toEqual([
        'validation_failed',
        'body',
      ]);
    }
    expect((await core.webhooks.list({ workspaceId: 'ws1' })).total).toBe(0);
  });

  it('updates url, events, secret and enabled; bumps updatedAt; an empty patch changes nothing', async () => {
    const { core, clock, stored } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, { ...base, secret: GIVEN_SECRET });
    clock.advance(1_000);
    expect(await core.webhooks.update({ workspaceId: 'ws1' }, created.id, {})).toEqual(created);
    const newSecret = 'another raw secret, long enough';
    const updated = await core.webhooks.update({ workspaceId: 'ws1' }, created.id, {
      url: 'https://other.example.com/hook',
      events: ['conversation.completed'],
      secret: newSecret,
      enabled: false,
    });
    expect(updated).toEqual({
      ...created,
      url: 'https://other.example.com/hook',
      events: ['conversation.completed'],
      enabled: false,
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
    expect(await stored(created.id)).toEqual({
      ...updated,
      secret: newSecret,
      previousSecrets: [],
      failingSince: null,
    });
    const unchanged = await core.webhooks.update({ workspaceId: 'ws1' }, created.id, {
      secret: undefined,
      enabled: undefined,
    });
    expect(unchanged).toEqual(updated);
    expect(await stored(created.id)).toEqual({
      ...updated,
      secret: newSecret,
      previousSecrets: [],
      failingSince: null,
    });
    expect(
      (await rejection(core.webhooks.update({ workspaceId: 'ws1' }, created.id, { secret: 'whsec_###' }))).code,
    ).toBe('validation_failed');
    expect(
      (await rejection(core.webhooks.update({ workspaceId: 'ws1' }, created.id, { id: 'wh_x' } as never))).code,
    ).toBe('validation_failed');
    expect((await stored(created.id)).secret).toBe(newSecret);
  });

  it('stores and returns the URL in its normalised form, on registration and on PATCH', async () => {
    const { core, stored } = setup();
    const created = await core.webhooks.create(
      { workspaceId: 'ws1' },
      { ...base, url: 'HTTPS://Hooks.EXAMPLE.com:443/a/../b c?q=ä' },
    );
    expect(created.url).toBe('https://hooks.example.com/b%20c?q=%C3%A4');
    expect((await stored(created.id)).url).toBe(created.url);
    const updated = await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url: 'http://bücher.example:80' });
    expect(updated.url).toBe('http://xn--bcher-kva.example/');
    expect((await core.webhooks.get({ workspaceId: 'ws1' }, created.id)).url).toBe('http://xn--bcher-kva.example/');
  });

  it('refuses control characters and surrounding whitespace in a URL at path url, on POST and PATCH', async () => {
    const { core } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, base);
    const refused = [
      ' https://hooks.example.com/x',
      'https://hooks.example.com/x ',
      '\thttps://hooks.example.com/x',
      'https://hooks.example.com/x\n',
      'https://hooks.exa\tmple.com/x',
      'https://hooks.example.com/a\nb',
      'https://hooks.example.com/\u0000',
      'https://hooks.example.com/\u007f',
      'https://hooks.example.com/\u0085',
    ];
    for (const url of refused) {
      for (const call of [
        core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url }),
        core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url }),
      ]) {
        const error = await rejection(call);
        expect(error.code, JSON.stringify(url)).toBe('validation_failed');
        expect(issuePaths(error), JSON.stringify(url)).toEqual(['url']);
      }
    }
    expect((await core.webhooks.list({ workspaceId: 'ws1' })).total).toBe(1);
    expect((await core.webhooks.get({ workspaceId: 'ws1' }, created.id)).url).toBe(base.url);
  });

  it('PATCH enabled: true clears disabledReason and failingSince; enabled: false leaves no reason; a new secret drops the previous one', async () => {
    const { core, stored } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, base);
    // What the delivery worker does on a 410 after days of failures, and a rotation did before.
    await core.storage.webhookEndpoints.update({ workspaceId: 'ws1' }, created.id, {
      set: {
        enabled: false,
        disabledReason: 'gone',
        failingSince: '2025-12-20T00:00:00.000Z',
        previousSecrets: [{ secret: 'an old secret, long enough', expiresAt: '2026-01-02T00:00:00.000Z' }],
      },
    });
    expect(await core.webhooks.get({ workspaceId: 'ws1' }, created.id)).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    // Another field leaves the delivery state alone.
    await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { events: ['agent.deleted'] });
    expect(await stored(created.id)).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
      failingSince: '2025-12-20T00:00:00.000Z',
    });
    expect(await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { enabled: true })).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    expect(await stored(created.id)).toMatchObject({
      failingSince: null,
      previousSecrets: [{ secret: 'an old secret, long enough', expiresAt: '2026-01-02T00:00:00.000Z' }],
    });
    await core.storage.webhookEndpoints.update({ workspaceId: 'ws1' }, created.id, {
      set: { disabledReason: 'failing', enabled: false },
    });
    expect(await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { enabled: false })).toMatchObject({
      enabled: false,
      disabledReason: null,
    });
    await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { secret: GIVEN_SECRET });
    expect(await stored(created.id)).toMatchObject({ secret: GIVEN_SECRET, previousSecrets: [] });
  });

  it('concurrent PATCHes of different fields both survive', async () => {
    const { core } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, base);
    await Promise.all([
      core.webhooks.update({ workspaceId: 'ws1' }, created.id, { enabled: false }),
      core.webhooks.update({ workspaceId: 'ws1' }, created.id, { events: ['conversation.completed'] }),
      core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url: 'https://other.example.com/h' }),
    ]);
    expect(await core.webhooks.get({ workspaceId: 'ws1' }, created.id)).toMatchObject({
      enabled: false,
      events: ['conversation.completed'],
      url: 'https://other.example.com/h',
    });
  });

  it('lists newest first, paged, within the workspace; deletes once', async () => {
    const { core, clock } = setup();
    const made: WebhookEndpoint[] = [];
    for (let index = 0; index < 3; index += 1) {
      clock.advance(1);
      const { secret: _secret, ...endpoint } = await core.webhooks.create({ workspaceId: 'ws1' }, base);
      made.unshift(endpoint);
    }
    expect(await core.webhooks.list({ workspaceId: 'ws1' })).toEqual({ webhooks: made, total: 3, page: 1, limit: 20 });
    expect(await core.webhooks.list({ workspaceId: 'ws1' }, { page: '2', limit: '2' })).toEqual({
      webhooks: made.slice(2),
      total: 3,
      page: 2,
      limit: 2,
    });
    expect(await core.webhooks.list({ workspaceId: 'ws2' })).toEqual({ webhooks: [], total: 0, page: 1, limit: 20 });
    for (const query of [{ page: 0 }, { limit: 101 }, { enabled: true }]) {
      expect((await rejection(core.webhooks.list({ workspaceId: 'ws1' }, query as never))).code).toBe(
        'validation_failed',
      );
    }
    const foreign = [
      () => core.webhooks.get({ workspaceId: 'ws2' }, made[0]!.id),
      () => core.webhooks.update({ workspaceId: 'ws2' }, made[0]!.id, { enabled: false }),
      () => core.webhooks.delete({ workspaceId: 'ws2' }, made[0]!.id),
    ];
    for (const call of foreign) {
      expect((await rejection(call())).code).toBe('not_found');
    }
    await core.webhooks.delete({ workspaceId: 'ws1' }, made[0]!.id);
    expect((await rejection(core.webhooks.get({ workspaceId: 'ws1' }, made[0]!.id))).code).toBe('not_found');
    expect((await rejection(core.webhooks.delete({ workspaceId: 'ws1' }, made[0]!.id))).code).toBe('not_found');
    expect(await core.webhooks.list({ workspaceId: 'ws1' })).toMatchObject({ webhooks: made.slice(1), total: 2 });
  });

  it('refuses private targets at registration: literals and names resolving to them; nothing stored', async () => {
    const { core, resolver } = setup();
    expectRefusedTarget(
      await rejection(core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `http://127.0.0.1:8080/${MARK}` })),
      'loopback',
    );
    expectRefusedTarget(
      await rejection(
        core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `http://[::ffff:a9fe:a9fe]/${MARK}` }),
      ),
      'cloud metadata',
    );
    expectRefusedTarget(
      await rejection(
        core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `https://${INTERNAL_HOST}/${MARK}` }),
      ),
      'private',
    );
    expect(resolver.lookups).toEqual([INTERNAL_HOST]);
    expect((await core.webhooks.list({ workspaceId: 'ws1' })).total).toBe(0);
    // The schema answers first: an ftp URL never reaches the resolver.
    expect(
      (await rejection(core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `ftp://${INTERNAL_HOST}/` }))).code,
    ).toBe('validation_failed');
    expect(resolver.lookups).toHaveLength(1);
  });

  it('refuses a private url on PATCH, before the 404 of an unknown id; other fields are not resolved', async () => {
    const { core, clock, stored, resolver } = setup();
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, { ...base, secret: GIVEN_SECRET });
    const before = await stored(created.id);
    clock.advance(1_000);
    expectRefusedTarget(
      await rejection(
        core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url: `https://${INTERNAL_HOST}/`, enabled: false }),
      ),
      'private',
    );
    expectRefusedTarget(
      await rejection(core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url: 'http://localhost/' })),
      'loopback',
    );
    expect(await stored(created.id)).toEqual(before);
    expectRefusedTarget(
      await rejection(core.webhooks.update({ workspaceId: 'ws1' }, 'wh_missing', { url: 'http://10.0.0.1/' })),
      'private',
    );
    expect(
      (await rejection(core.webhooks.update({ workspaceId: 'ws1' }, 'wh_missing', { url: 'https://8.8.8.8/' }))).code,
    ).toBe('not_found');
    resolver.lookups.length = 0;
    await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { enabled: false, events: ['agent.deleted'] });
    expect(resolver.lookups).toEqual([]);
  });

  it('with allowPrivateWebhookUrls registers and updates private targets without resolving them', async () => {
    const { core, resolver } = setup({ allowPrivateWebhookUrls: true });
    const created = await core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: 'http://127.0.0.1:4000/hooks' });
    expect(created.url).toBe('http://127.0.0.1:4000/hooks');
    expect(
      (await core.webhooks.update({ workspaceId: 'ws1' }, created.id, { url: `https://${INTERNAL_HOST}/` })).url,
    ).toBe(`https://${INTERNAL_HOST}/`);
    expect(resolver.lookups).toEqual([]);
  });

  it('refuses private literals by default, with no resolver given', async () => {
    const core = createCore(memoryAdapters());
    expectRefusedTarget(
      await rejection(core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `http://localhost:3000/${MARK}` })),
      'loopback',
    );
    expectRefusedTarget(
      await rejection(core.webhooks.create({ workspaceId: 'ws1' }, { ...base, url: `http://192.168.0.1/${MARK}` })),
      'private',
    );
  });
});
