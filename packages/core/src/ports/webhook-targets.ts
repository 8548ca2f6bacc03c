/**
 * @module The host resolver port, which webhook target checks use to see where a URL's host name
 * points, and its default over the operating system's resolver.
 */
import { lookup } from 'node:dns/promises';

/**
 * Resolves host names to IP addresses.
 *
 * - `host` is a DNS name exactly as it appears in a URL's `hostname` (lowercase, possibly with a
 *   trailing dot); never an IP literal, which callers classify themselves.
 * - Resolves to every address the name currently maps to (IPv4 dotted-quad or IPv6 text), in any
 *   order, possibly empty. Rejects when the name does not exist (NXDOMAIN, `ENOTFOUND`) or the
 *   lookup fails.
 * - Callers impose their own deadline (2 s at webhook registration) and stop waiting after it, so
 *   an implementation need not time out by itself, and a late answer is simply ignored.
 */
export interface HostResolver {
  resolve(host: string): Promise<string[]>;
}

/**
 * The operating system's resolver (`getaddrinfo` through `dns.lookup`, so `/etc/hosts` and search
 * domains apply exactly as they will when a delivery connects). A lookup cannot be cancelled: one
 * that outlives the caller's deadline keeps a libuv thread busy until the OS gives up.
 */
export const systemHostResolver: HostResolver = {
  async resolve(host) {
    const addresses = await lookup(host, { all: true, verbatim: true });
    return addresses.map((entry) => entry.address);
  },
};
