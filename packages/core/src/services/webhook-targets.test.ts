/** @module WebhookTargetPolicy: which webhook URLs registration refuses (docs/events-and-webhooks.md#targets). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HostResolver } from '../ports/webhook-targets.js';
import { StaticHostResolver } from '../testing/host-resolver.js';
import { nonPublicAddressKind, WEBHOOK_RESOLVE_TIMEOUT_MS, WebhookTargetPolicy } from './webhook-targets.js';

const SCOPE = { workspaceId: 'ws' };

/** URLs refused without any lookup, with the kind their reason names. */
const REFUSED_LITERALS: Array<[string, string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['https://127.255.10.20:8443/hook', 'loopback'],
  ['http://[::1]/', 'loopback'],
  ['http://10.0.0.1/', 'private'],
  ['http://172.16.0.1/', 'private'],
  ['http://172.31.255.255/', 'private'],
  ['http://192.168.1.10/', 'private'],
  ['http://[fc00::1]/', 'private'],
  ['http://[fd12:3456:789a::1]/', 'private'],
  ['http://169.254.10.1/', 'link-local'],
  ['http://[fe80::1]/', 'link-local'],
  ['http://[febf:ffff::1]/', 'link-local'],
  ['http://100.64.0.1/', 'shared (CGNAT)'],
  ['http://100.127.255.254/', 'shared (CGNAT)'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://[::]/', 'unspecified'],
  ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
  ['http://[fd00:ec2::254]/', 'cloud metadata'],
  // IPv4-mapped IPv6 is judged by its IPv4 address.
  ['http://[::ffff:127.0.0.1]/', 'loopback'],
  ['http://[0:0:0:0:0:ffff:a00:1]/', 'private'],
  ['http://[::ffff:a9fe:a9fe]/', 'cloud metadata'],
  // Other IPv4 spellings: the WHATWG URL parser turns them into dotted-quad form.
  ['http://2130706433/', 'loopback'],
  ['http://0x7f.1/', 'loopback'],
  ['http://0x7f000001/', 'loopback'],
  ['http://017700000001/', 'loopback'],
  ['http://0177.0.0.1/', 'loopback'],
  ['http://127.1/', 'loopback'],
  ['http://%31%32%37.0.0.1/', 'loopback'],
  ['http://3232235777/', 'private'],
  ['http://0xa9fea9fe/', 'cloud metadata'],
  ['http://0/', 'unspecified'],
  // Not public either: multicast, broadcast, documentation, and IPv6 forms embedding IPv4.
  ['http://224.0.0.1/', 'reserved'],
  ['http://255.255.255.255/', 'reserved'],
  ['http://192.0.2.1/', 'reserved'],
  ['http://[ff02::1]/', 'reserved'],
  ['http://[::127.0.0.1]/', 'reserved'],
  ['http://[64:ff9b::a00:1]/', 'reserved'],
  ['http://[2002:7f00:1::]/', 'reserved'],
];

/** Names refused without any lookup. */
const REFUSED_NAMES = [
  'http://localhost/',
  'http://LOCALHOST.:8080/',
  'https://api.localhost/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata.google.internal./',
];

/** Public literals, including the first addresses past the refused ranges. */
const PUBLIC_LITERALS = [
  'https://8.8.8.8/hook',
  'http://11.0.0.1/',
  'http://172.15.255.255/',
  'http://172.32.0.0/',
  'http://192.169.0.1/',
  'http://100.63.255.255/',
  'http://100.128.0.0/',
  'http://169.253.255.255/',
  'http://169.255.0.1/',
  'https://[2606:4700:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
];

function policy(table: Record<string, string[]> = {}, options: { allowPrivate?: boolean } = {}) {
  const resolver = new StaticHostResolver(table);
  return { resolver, targets: new WebhookTargetPolicy({ resolver, ...options }) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('WebhookTargetPolicy', () => {
  it.each(REFUSED_LITERALS)('refuses %s as %s, without a lookup and without echoing the host', async (url, kind) => {
    const { resolver, targets } = policy();
    const reason = await targets.refusal(SCOPE, url);
    expect(reason).toContain(`${kind} address`);
    expect(reason).not.toContain(new URL(url).hostname.replace(/^\[|\]$/g, ''));
    expect(resolver.lookups).toEqual([]);
  });

  it.each(REFUSED_NAMES)('refuses the name in %s without a lookup', async (url) => {
    const { resolver, targets } = policy();
    expect(await targets.refusal(SCOPE, url)).toMatch(/localhost names are loopback addresses|cloud metadata name/);
    expect(resolver.lookups).toEqual([]);
  });

  it.each(PUBLIC_LITERALS)('accepts the public address in %s', async (url) => {
    const { resolver, targets } = policy();
    expect(await targets.refusal(SCOPE, url)).toBeNull();
    expect(resolver.lookups).toEqual([]);
  });

  it('refuses a name when any address it resolves to is not public, IPv6 and IPv4-mapped included', async () => {
    const { resolver, targets } = policy({
      'internal.example.com': ['10.1.2.3'],
      'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
      'v6.example.com': ['2606:4700::6810:85e5', 'fd00::1'],
      'mapped.example.com': ['::ffff:169.254.169.254'],
      'garbled.example.com': ['not-an-address'],
    });
    expect(await targets.refusal(SCOPE, 'https://internal.example.com/hook')).toContain(
      'the host name resolves to a private address',
    );
    expect(await targets.refusal(SCOPE, 'https://mixed.example.com/')).toContain('resolves to a loopback address');
    expect(await targets.refusal(SCOPE, 'https://v6.example.com/')).toContain('resolves to a private address');
    expect(await targets.refusal(SCOPE, 'https://mapped.example.com/')).toContain(
      'resolves to a cloud metadata address',
    );
    expect(await targets.refusal(SCOPE, 'https://garbled.example.com/')).toContain('resolves to a reserved address');
    expect(resolver.lookups).toEqual([
      'internal.example.com',
      'mixed.example.com',
      'v6.example.com',
      'mapped.example.com',
      'garbled.example.com',
    ]);
  });

  it('accepts a name with only public addresses, none at all, or that does not resolve', async () => {
    const { resolver, targets } = policy({
      'public.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'empty.example.com': [],
    });
    expect(await targets.refusal(SCOPE, 'https://public.example.com/hook')).toBeNull();
    expect(await targets.refusal(SCOPE, 'https://empty.example.com/hook')).toBeNull();
    expect(await targets.refusal(SCOPE, 'https://unknown.example.com/hook')).toBeNull();
    expect(resolver.lookups).toEqual(['public.example.com', 'empty.example.com', 'unknown.example.com']);
  });

  it('resolves a fully qualified name as written, trailing dot included', async () => {
    const { resolver, targets } = policy({ 'internal.example.com.': ['192.168.0.2'] });
    expect(await targets.refusal(SCOPE, 'https://internal.example.com./')).toContain('private address');
    expect(resolver.lookups).toEqual(['internal.example.com.']);
  });

  it('accepts when the resolver throws, even synchronously', async () => {
    const throwing: HostResolver = {
      resolve: () => {
        throw new Error('resolver broke');
      },
    };
    expect(await new WebhookTargetPolicy({ resolver: throwing }).refusal(SCOPE, 'https://example.com/')).toBeNull();
  });

  it('waits at most 2 s for a name, then accepts it and ignores a late private answer', async () => {
    vi.useFakeTimers();
    let answer: (addresses: string[]) => void = () => {};
    const slow: HostResolver = { resolve: () => new Promise((resolve) => (answer = resolve)) };
    const settled = vi.fn();
    void new WebhookTargetPolicy({ resolver: slow }).refusal(SCOPE, 'https://slow.example.com/').then(settled);
    await vi.advanceTimersByTimeAsync(WEBHOOK_RESOLVE_TIMEOUT_MS - 1);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toHaveBeenCalledWith(null);
    answer(['127.0.0.1']);
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toHaveBeenCalledTimes(1);
    expect(WEBHOOK_RESOLVE_TIMEOUT_MS).toBe(2_000);
  });

  it('takes its deadline from resolveTimeoutMs, and an answer within it counts', async () => {
    const hanging: HostResolver = { resolve: () => new Promise(() => {}) };
    const started = performance.now();
    expect(
      await new WebhookTargetPolicy({ resolver: hanging, resolveTimeoutMs: 20 }).refusal(
        SCOPE,
        'https://slow.example.com/',
      ),
    ).toBeNull();
    expect(performance.now() - started).toBeLessThan(1_000);
    const prompt: HostResolver = { resolve: () => new Promise((resolve) => setTimeout(resolve, 5, ['10.0.0.1'])) };
    expect(
      await new WebhookTargetPolicy({ resolver: prompt, resolveTimeoutMs: 1_000 }).refusal(
        SCOPE,
        'https://slow.example.com/',
      ),
    ).toContain('private address');
  });

  it('with allowPrivate accepts everything and resolves nothing', async () => {
    const { resolver, targets } = policy({ 'internal.example.com': ['10.1.2.3'] }, { allowPrivate: true });
    for (const url of [...REFUSED_LITERALS.map(([url]) => url), ...REFUSED_NAMES, 'https://internal.example.com/']) {
      expect(await targets.refusal(SCOPE, url), url).toBeNull();
    }
    expect(resolver.lookups).toEqual([]);
  });
});

describe('nonPublicAddressKind', () => {
  it.each([
    ['8.8.8.8', null],
    ['2001:4860:4860::8888', null],
    ['127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::', 'unspecified'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:0:7f00:1', 'reserved'],
    ['', 'reserved'],
    ['localhost', 'reserved'],
  ])('%j is %s', (address, kind) => {
    expect(nonPublicAddressKind(address)).toBe(kind);
  });
});
