/**
 * @module Which webhook URLs may be registered (docs/events-and-webhooks.md#targets): only hosts with public
 * addresses, unless private targets are allowed. Guards against server-side request forgery
 * (a webhook pointed at the server's own network or a cloud metadata service).
 */
import ipaddr from 'ipaddr.js';
import type { WorkspaceScope } from '../ports/scope.js';
import { systemHostResolver, type HostResolver } from '../ports/webhook-targets.js';

/** How long registration waits for a host name to resolve, in ms (docs/events-and-webhooks.md). */
export const WEBHOOK_RESOLVE_TIMEOUT_MS = 2_000;

/** Options of {@link WebhookTargetPolicy}. */
export interface WebhookTargetOptions {
  /** Accept every `http(s)` URL, private and loopback ones included (default `false`). */
  allowPrivate?: boolean;
  /** Where host names are resolved (default {@link systemHostResolver}). */
  resolver?: HostResolver;
  /**
   * How a check made for `scope` resolves a name (default `resolver`'s): `createCore` makes it
   * wait for the scope's pending rate-limit decision, so a refused request resolves nothing
   * (rate-limit/admit-first.ts).
   */
  lookup?: (scope: WorkspaceScope, host: string) => Promise<string[]>;
  /** How long to wait for `resolver`, in ms (default {@link WEBHOOK_RESOLVE_TIMEOUT_MS}). */
  resolveTimeoutMs?: number;
}

/** Why an address is not a public one, as it reads in "a … address". */
export type NonPublicAddressKind =
  'loopback' | 'private' | 'link-local' | 'shared (CGNAT)' | 'unspecified' | 'cloud metadata' | 'reserved';

/** ipaddr.js range names (`range()`) and what they are here; any range not listed is `reserved`. */
const KIND_OF_RANGE: Partial<Record<string, NonPublicAddressKind | null>> = {
  unicast: null,
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'shared (CGNAT)',
  unspecified: 'unspecified',
};

/**
 * Instance metadata services (AWS, Azure, GCP, … over IPv4; AWS Nitro over IPv6). Their ranges
 * are refused anyway (link-local, unique local); they are named so the reason says what they are.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254']);
/** Names that reach a metadata service without DNS (GCP resolves it internally). */
const METADATA_NAMES = new Set(['metadata.google.internal']);
/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, RFC 4291 §2.5.5.1, deprecated): ipaddr.js calls it unicast,
 * but it only ever stood for the embedded IPv4 address (`[::127.0.0.1]`), so it is not public.
 */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/**
 * What kind of non-public address `address` (an IPv4 or IPv6 literal, without brackets) is, or
 * `null` when it is a public unicast address. Only global unicast passes: besides the classes of
 * docs/events-and-webhooks.md, multicast, broadcast, documentation, benchmarking and the IPv6 ranges that embed
 * an IPv4 address (NAT64, 6to4, Teredo) are `reserved`. IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is
 * judged by its IPv4 address. Text that is no address at all is `reserved` too (fail closed).
 */
export function nonPublicAddressKind(address: string): NonPublicAddressKind | null {
  if (!ipaddr.isValid(address)) return 'reserved';
  const parsed = ipaddr.process(address);
  if (METADATA_ADDRESSES.has(parsed.toString())) return 'cloud metadata';
  const kind = KIND_OF_RANGE[parsed.range()];
  if (kind === undefined) return 'reserved';
  return kind === null && parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE) ? 'reserved' : kind;
}

const UNLESS = 'Private targets are refused unless private webhook URLs are allowed.';

/**
 * Decides whether a webhook URL may be registered. Registration only: names are resolved now,
 * but what a name points to can change (DNS rebinding), so every delivery must check the address
 * it actually connects to as well. That delivery-side check is to be built with delivery.
 */
export class WebhookTargetPolicy {
  private readonly allowPrivate: boolean;
  private readonly lookup: (scope: WorkspaceScope, host: string) => Promise<string[]>;
  private readonly resolveTimeoutMs: number;

  constructor(options: WebhookTargetOptions = {}) {
    this.allowPrivate = options.allowPrivate ?? false;
    const resolver = options.resolver ?? systemHostResolver;
    this.lookup = options.lookup ?? ((_scope, host) => resolver.resolve(host));
    this.resolveTimeoutMs = options.resolveTimeoutMs ?? WEBHOOK_RESOLVE_TIMEOUT_MS;
  }

  /**
   * Why `url` (an absolute `http(s)` URL, already schema-checked) is refused, or `null` when it
   * may be registered. The reason never contains the URL. Refused: IP literals in any form the
   * WHATWG URL parser normalises (`http://2130706433/`, `http://0x7f.1/`, `[::ffff:7f00:1]`) that
   * are not public, `localhost` and `*.localhost` (RFC 6761), metadata host names, and names that
   * resolve to any non-public address. A name that does not resolve, or not within
   * `resolveTimeoutMs`, is accepted: DNS may be down, and the delivery-side check still applies.
   */
  async refusal(scope: WorkspaceScope, url: string): Promise<string | null> {
    if (this.allowPrivate) return null;
    const hostname = new URL(url).hostname;
    const literal = literalAddress(hostname);
    if (literal !== undefined) {
      const kind = nonPublicAddressKind(literal);
      return kind === null
        ? null
        : `Expected a public address; the host is ${article(kind)} ${kind} address. ${UNLESS}`;
    }
    // Compare names without the trailing dot of a fully qualified name, but resolve them as
    // written: without the dot, search domains apply, exactly as when a delivery connects.
    const name = hostname.replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost'))
      return `Expected a public address; localhost names are loopback addresses (RFC 6761). ${UNLESS}`;
    if (METADATA_NAMES.has(name)) return `Expected a public address; the host is a cloud metadata name. ${UNLESS}`;
    const addresses = await this.resolve(scope, hostname);
    const kind = addresses.map(nonPublicAddressKind).find((found) => found !== null);
    return kind === undefined || kind === null
      ? null
      : `Expected a public address; the host name resolves to ${article(kind)} ${kind} address. ${UNLESS}`;
  }

  /** The name's addresses; `[]` when it fails to resolve or takes longer than the deadline. */
  private async resolve(scope: WorkspaceScope, hostname: string): Promise<string[]> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<string[]>((resolve) => (timer = setTimeout(resolve, this.resolveTimeoutMs, [])));
    const lookup = Promise.resolve()
      .then(() => this.lookup(scope, hostname))
      .catch(() => []);
    try {
      return await Promise.race([lookup, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The address of an IP-literal host, or `undefined` for a name. The URL parser has already turned
 * every IPv4 spelling into dotted-quad form and wrapped IPv6 in brackets, so nothing looser
 * (ipaddr.js also reads `0x7f000001`) is treated as a literal here.
 */
function literalAddress(hostname: string): string | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? hostname : undefined;
}

function article(kind: NonPublicAddressKind): string {
  return /^[aeiu]/.test(kind) ? 'an' : 'a';
}
