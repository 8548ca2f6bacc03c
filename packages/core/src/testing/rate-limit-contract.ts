/** @module The contract every RateLimitStore adapter runs against itself: GCRA's exact decisions, atomically. */
import { randomUUID } from 'node:crypto';
import type { RateLimitDecision, RateLimitRule, RateLimitStore } from '../ports/rate-limit.js';
import { gcra } from '../rate-limit/gcra.js';
import { contractGroup, type ContractTestApi } from './contract.js';

/** Options of {@link runRateLimitStoreContract}: `skip` names opted-out tests as `'rate limits: <title>'`. */
export interface RateLimitStoreContractOptions {
  skip?: readonly string[];
}

const FREE: RateLimitRule = { limit: 100, periodMs: 3_600_000 }; // T = 36 000 ms
const SMALL: RateLimitRule = { limit: 5, periodMs: 60_000 }; // T = 12 000 ms
const ODD: RateLimitRule = { limit: 7, periodMs: 60_000 }; // T = ceil(8 571.4…) = 8 572 ms

const allowed = (limit: number, remaining: number, resetMs: number): RateLimitDecision => ({
  allowed: true,
  limit,
  remaining,
  resetMs,
  retryAfterMs: 0,
});
const refused = (limit: number, resetMs: number, retryAfterMs: number): RateLimitDecision => ({
  allowed: false,
  limit,
  remaining: 0,
  resetMs,
  retryAfterMs,
});

/**
 * Registers the rate-limit store contract: `factory` returns a fresh store for each test (it may
 * share a backend: every test uses keys of its own, which expire on their own). Times are near
 * the real clock, so adapters that set TTLs, relative or absolute, behave as in production.
 */
export function runRateLimitStoreContract(
  t: ContractTestApi,
  factory: () => RateLimitStore | Promise<RateLimitStore>,
  options: RateLimitStoreContractOptions = {},
): void {
  const { expect } = t;
  const key = (name: string) => `contract-${name}-${randomUUID()}`;
  const base = () => Date.now();
  const open = async () => ({ subject: await factory(), cleanup: async () => {} });

  contractGroup(t, 'rate limits', open, options.skip ?? [], (test) => {
    test('admits exactly `limit` requests at one instant, then refuses', async (store) => {
      const [k, now] = [key('burst'), base()];
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 7; i++) decisions.push(await store.hit(k, SMALL, now));
      expect(decisions).toEqual([
        allowed(5, 4, 12_000),
        allowed(5, 3, 24_000),
        allowed(5, 2, 36_000),
        allowed(5, 1, 48_000),
        allowed(5, 0, 60_000),
        refused(5, 60_000, 12_000),
        refused(5, 60_000, 12_000),
      ]);
    });

    test('records nothing for a refused request', async (store) => {
      const [hammered, quiet, now] = [key('hammered'), key('quiet'), base()];
      for (let i = 0; i < 5; i++) {
        await store.hit(hammered, SMALL, now);
        await store.hit(quiet, SMALL, now);
      }
      for (let ms = 1; ms < 12_000; ms += 1_000) {
        expect((await store.hit(hammered, SMALL, now + ms)).allowed).toBe(false);
      }
      // The refusals above changed nothing: both keys get quota back at the same instant.
      expect(await store.hit(hammered, SMALL, now + 11_999)).toEqual(refused(5, 48_001, 1));
      expect(await store.hit(quiet, SMALL, now + 11_999)).toEqual(refused(5, 48_001, 1));
      expect(await store.hit(hammered, SMALL, now + 12_000)).toEqual(allowed(5, 0, 60_000));
      expect(await store.hit(quiet, SMALL, now + 12_000)).toEqual(allowed(5, 0, 60_000));
    });

    test('gives quota back one emission interval at a time, to the millisecond', async (store) => {
      const [k, now] = [key('refill'), base()];
      for (let i = 0; i < 5; i++) await store.hit(k, SMALL, now);
      expect(await store.hit(k, SMALL, now + 11_999)).toEqual(refused(5, 48_001, 1));
      expect(await store.hit(k, SMALL, now + 12_000)).toEqual(allowed(5, 0, 60_000));
      expect(await store.hit(k, SMALL, now + 23_999)).toEqual(refused(5, 48_001, 1));
      // Two intervals with no request: two requests come back, not three.
      expect(await store.hit(k, SMALL, now + 36_000)).toEqual(allowed(5, 1, 48_000));
      expect(await store.hit(k, SMALL, now + 36_000)).toEqual(allowed(5, 0, 60_000));
      expect(await store.hit(k, SMALL, now + 36_000)).toEqual(refused(5, 60_000, 12_000));
      // 1 ms before the quota is full again (the TAT), then at it: as for a key never seen.
      expect(await store.hit(k, SMALL, now + 95_999)).toEqual(allowed(5, 3, 12_001));
      expect(await store.hit(k, SMALL, now + 108_000)).toEqual(allowed(5, 4, 12_000));
    });

    test('reports remaining, resetMs and retryAfterMs exactly at the boundaries of a Free plan', async (store) => {
      const [k, now] = [key('free'), base()];
      expect(await store.hit(k, FREE, now)).toEqual(allowed(100, 99, 36_000));
      for (let i = 2; i < 100; i++) await store.hit(k, FREE, now);
      expect(await store.hit(k, FREE, now)).toEqual(allowed(100, 0, 3_600_000));
      expect(await store.hit(k, FREE, now)).toEqual(refused(100, 3_600_000, 36_000));
      expect(await store.hit(k, FREE, now + 35_999)).toEqual(refused(100, 3_564_001, 1));
      expect(await store.hit(k, FREE, now + 36_000)).toEqual(allowed(100, 0, 3_600_000));
      expect(await store.hit(k, FREE, now + 36_001)).toEqual(refused(100, 3_599_999, 35_999));
      // 10 intervals later: 10 back; the first of them leaves 9.
      expect(await store.hit(k, FREE, now + 396_000)).toEqual(allowed(100, 9, 3_276_000));
    });

    test('keeps keys independent', async (store) => {
      const [a, b, now] = [key('a'), key('b'), base()];
      for (let i = 0; i < 5; i++) await store.hit(a, SMALL, now);
      expect((await store.hit(a, SMALL, now)).allowed).toBe(false);
      expect(await store.hit(b, SMALL, now)).toEqual(allowed(5, 4, 12_000));
      expect((await store.hit(a, SMALL, now)).allowed).toBe(false);
    });

    test('decides exactly as gcra() for a scripted sequence, rule changes included', async (store) => {
      const now = base();
      const keys = [key('s0'), key('s1'), key('s2')];
      const model = new Map<string, number | null>();
      // A fixed pseudo-random walk (LCG) so every run and every adapter sees the same script.
      let seed = 42;
      const next = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % n;
      let offset = 0;
      for (let step = 0; step < 300; step++) {
        offset += [0, 1, 999, 8_571, 8_572, 12_000, 30_000][next(7)]!;
        const k = keys[next(3)]!;
        const rule = [SMALL, ODD, FREE][step < 150 ? keys.indexOf(k) : next(3)]!;
        const expected = gcra(model.get(k) ?? null, rule, now + offset);
        if (expected.tat !== null) model.set(k, expected.tat);
        expect({ step, decision: await store.hit(k, rule, now + offset) }).toEqual({
          step,
          decision: expected.decision,
        });
      }
    });

    test('decides a hit stamped before one already admitted at that later time', async (store) => {
      const [k, now] = [key('late-stamp'), base()];
      expect(await store.hit(k, FREE, now + 1_000)).toEqual(allowed(100, 99, 36_000));
      // Decided at now + 1 000, not now: one interval more debt, not one interval and 1 000 ms.
      expect(await store.hit(k, FREE, now)).toEqual(allowed(100, 98, 72_000));
      expect(await store.hit(k, FREE, now + 1_001)).toEqual(allowed(100, 97, 107_999));
    });

    test('counts a burst down one by one whatever order its stamps arrive in', async (store) => {
      const [k, now] = [key('shuffled'), base()];
      // 100 stamps within 40 ms, in a fixed scrambled order (37 is coprime with 100) that starts
      // in the middle, so many reach the store after a later one.
      const stamps = Array.from({ length: 100 }, (_, i) => now + Math.floor(((i * 37 + 50) % 100) * 0.4));
      const remaining: number[] = [];
      for (const stamp of stamps) remaining.push((await store.hit(k, FREE, stamp)).remaining);
      expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
      expect((await store.hit(k, FREE, now)).allowed).toBe(false);
    });

    test('admits exactly `limit` of 500 simultaneous requests', async (store) => {
      const [k, now] = [key('concurrent'), base()];
      const decisions = await Promise.all(Array.from({ length: 500 }, () => store.hit(k, FREE, now)));
      const admitted = decisions.filter((decision) => decision.allowed);
      expect(admitted.length).toBe(100);
      // Atomic: no two callers saw the same state, so each `remaining` from 99 to 0 appears once.
      expect(admitted.map((decision) => decision.remaining).sort((x, y) => y - x)).toEqual(
        Array.from({ length: 100 }, (_, i) => 99 - i),
      );
      expect(decisions.filter((decision) => !decision.allowed).every((d) => d.retryAfterMs === 36_000)).toBe(true);
    });

    test('answers without I/O when it says it is in process (it then gets no deadline)', async (store) => {
      if (store.inProcess !== true) return;
      const [k, now] = [key('in-process'), base()];
      // An answer that waited for any I/O or timer would come after this immediate.
      let immediateRan = false;
      const immediate = new Promise<void>((resolve) => setImmediate(() => resolve(void (immediateRan = true))));
      const decision = await store.hit(k, FREE, now);
      expect(immediateRan).toBe(false);
      expect(decision).toEqual(allowed(100, 99, 36_000));
      await immediate;
    });
  });
}
