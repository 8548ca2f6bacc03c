/** @module A host resolver tests fill by hand, so webhook target checks need no network. */
import type { HostResolver } from '../ports/webhook-targets.js';

/**
 * A {@link HostResolver} answering from a fixed table: a name in `table` resolves to its
 * addresses; any other name fails like an unknown name (`ENOTFOUND`), which registration accepts.
 * `lookups` records every name asked for, in order.
 */
export class StaticHostResolver implements HostResolver {
  readonly lookups: string[] = [];

  constructor(private readonly table: Record<string, string[]> = {}) {}

  async resolve(host: string): Promise<string[]> {
    this.lookups.push(host);
    const addresses = Object.hasOwn(this.table, host) ? this.table[host] : undefined;
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [...addresses];
  }
}
