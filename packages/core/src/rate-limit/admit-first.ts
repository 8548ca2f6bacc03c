/**
 * @module The guarantee that nothing a request stores or resolves happens before its rate limit
 * admits it: the core's storage and host resolver, wrapped once at `createCore` so every call
 * whose scope carries a pending decision makes that decision first (docs/rate-limits.md#one-round-trip).
 */
import type { RateLimitStore } from '../ports/rate-limit.js';
import type { WorkspaceScope } from '../ports/scope.js';
import { SCOPED_STORES, type Storage } from '../ports/storage.js';
import type { HostResolver } from '../ports/webhook-targets.js';

type Call = (scope: WorkspaceScope, ...rest: never[]) => Promise<unknown>;

/**
 * `call`, preceded by the decision of its scope's pending admission: a request that is refused
 * throws `rate_limit_exceeded` before `call` runs. With `takes`, a still pending admission is left
 * to `call`, which decides it in its own atomic step; calls made once it was taken wait for it.
 * A scope without one (or an admitted one) costs a property read.
 */
function admitted<F extends Call>(call: F, takes: boolean): F {
  return function (scope: WorkspaceScope, ...rest: never[]) {
    const admission = scope.admission;
    if (admission === undefined || admission.admitted || (takes && admission.pending)) return call(scope, ...rest);
    return admission.admit().then(() => call(scope, ...rest));
  } as F;
}

/** Every method of `store` (own or inherited, bound to it), each wrapped by {@link admitted}. */
function admittedStore<T extends object>(store: T, takes: ReadonlySet<string>): T {
  const wrapped: Record<string, unknown> = {};
  for (
    let proto: object | null = store;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (store as Record<string, unknown>)[name];
      if (name === 'constructor' || name in wrapped || typeof value !== 'function') continue;
      wrapped[name] = admitted((value as Call).bind(store), takes.has(name));
    }
  }
  return wrapped as T;
}

/**
 * `storage` with each call of its scoped stores preceded by its scope's pending decision, except
 * the calls `storage` declares it decides itself ({@link Storage.decidesRateLimits}) when it
 * decides the hits of `rateLimits`: those take it. Other members are `storage`'s own.
 */
export function admitFirst(storage: Storage, rateLimits: RateLimitStore): Storage {
  const folds = storage.decidesRateLimits?.rateLimits === rateLimits ? storage.decidesRateLimits.calls : {};
  const stores: Partial<Record<(typeof SCOPED_STORES)[number], object>> = {};
  for (const name of SCOPED_STORES) stores[name] = admittedStore(storage[name], new Set(folds[name] ?? []));
  return {
    ...stores,
    outbox: storage.outbox,
    ping: () => storage.ping(),
  } as Storage;
}

/** `resolver`'s lookups for a scope, each made only once the scope's pending decision admitted the request (a lookup is an effect). */
export function admitFirstLookup(resolver: HostResolver): (scope: WorkspaceScope, host: string) => Promise<string[]> {
  return admitted((_scope: WorkspaceScope, host: string) => resolver.resolve(host), false);
}
