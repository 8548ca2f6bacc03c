/** @module Tests of the plan table and the start-up checks of key entries. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_RULES, planEntryIssues, planRules, ruleFor, ruleIssue } from './plans.js';

describe('ruleFor', () => {
  it('gives Free 100 and Pro 1 000 requests per hour', () => {
    expect(ruleFor({ plan: 'free' })).toEqual({ limit: 100, periodMs: 3_600_000 });
    expect(ruleFor({ plan: 'pro' })).toEqual({ limit: 1000, periodMs: 3_600_000 });
  });

  it("takes an Enterprise key's limitPerHour, and lets it override any plan", () => {
    expect(ruleFor({ plan: 'enterprise', limitPerHour: 25_000 })).toEqual({ limit: 25_000, periodMs: 3_600_000 });
    expect(ruleFor({ plan: 'free', limitPerHour: 10 })).toEqual({ limit: 10, periodMs: 3_600_000 });
  });

  it('refuses a limitPerHour that is not an integer from 1 to 3 600 000, as a configuration fault', () => {
    for (const limitPerHour of [0, -5, 2.5, 3_600_001, Number.NaN]) {
      expect(() => ruleFor({ plan: 'enterprise', limitPerHour }), String(limitPerHour)).toThrow(/limitPerHour/);
    }
    expect(ruleFor({ plan: 'enterprise', limitPerHour: 3_600_000 })).toEqual({ limit: 3_600_000, periodMs: 3_600_000 });
  });

  it('refuses an Enterprise key without limitPerHour unless the table has a default', () => {
    expect(() => ruleFor({ plan: 'enterprise' })).toThrow(/limitPerHour/);
    const plans = planRules({ enterprise: { limit: 50_000, periodMs: 3_600_000 } });
    expect(ruleFor({ plan: 'enterprise' }, plans)).toEqual({ limit: 50_000, periodMs: 3_600_000 });
  });
});

describe('planRules', () => {
  it('applies overrides over the defaults without changing them', () => {
    const plans = planRules({ free: { limit: 10, periodMs: 60_000 } });
    expect(ruleFor({ plan: 'free' }, plans)).toEqual({ limit: 10, periodMs: 60_000 });
    expect(ruleFor({ plan: 'pro' }, plans)).toEqual({ limit: 1000, periodMs: 3_600_000 });
    expect(DEFAULT_PLAN_RULES.free).toEqual({ limit: 100, periodMs: 3_600_000 });
  });

  it('keeps the default of a plan whose override is given as undefined', () => {
    const plans = planRules({ free: undefined, pro: { limit: 5, periodMs: 60_000 } });
    expect(ruleFor({ plan: 'free' }, plans)).toEqual({ limit: 100, periodMs: 3_600_000 });
    expect(ruleFor({ plan: 'pro' }, plans)).toEqual({ limit: 5, periodMs: 60_000 });
  });

  it('fails at start-up on an invalid rule, naming the plan', () => {
    expect(() => planRules({ pro: { limit: 0, periodMs: 60_000 } })).toThrow(
      "Plan 'pro': limit must be an integer ≥ 1, got 0",
    );
    expect(() => planRules({ free: { limit: 10, periodMs: 1_500 } })).toThrow(/whole number of seconds/);
  });
});

describe('ruleIssue', () => {
  it('accepts whole-second periods with at least 1 ms per request', () => {
    expect(ruleIssue({ limit: 1000, periodMs: 1000 })).toBeNull();
    expect(ruleIssue({ limit: 1001, periodMs: 1000 })).toBe('limit 1001 exceeds one request per ms over 1000 ms');
    expect(ruleIssue({ limit: 2.5, periodMs: 1000 })).toBe('limit must be an integer ≥ 1, got 2.5');
  });
});

describe('planEntryIssues', () => {
  it('accepts entries that agree per workspace', () => {
    expect(
      planEntryIssues([
        { workspaceId: 'a', plan: 'free' },
        { workspaceId: 'b', plan: 'enterprise', limitPerHour: 5000 },
        { workspaceId: 'a', plan: 'free' },
        { workspaceId: 'b', plan: 'enterprise', limitPerHour: 5000 },
      ]),
    ).toEqual([]);
  });

  it('reports disagreeing plans and limits, and Enterprise without a limit', () => {
    expect(
      planEntryIssues([
        { workspaceId: 'a', plan: 'free' },
        { workspaceId: 'a', plan: 'pro' },
        { workspaceId: 'e', plan: 'enterprise' },
        { workspaceId: 'b', plan: 'enterprise', limitPerHour: 5000 },
        { workspaceId: 'b', plan: 'enterprise', limitPerHour: 6000 },
      ]),
    ).toEqual([
      { path: '1.plan', message: "workspace 'a' has plan 'free' at 0 but 'pro' here" },
      { path: '2.limitPerHour', message: "plan 'enterprise' needs limitPerHour" },
      { path: '4.limitPerHour', message: "workspace 'b' has limitPerHour 5000 at 3 but 6000 here" },
    ]);
  });

  it('reports limits that are not integers from 1 to 3 600 000', () => {
    const issues = planEntryIssues([
      { workspaceId: 'a', plan: 'enterprise', limitPerHour: 0 },
      { workspaceId: 'b', plan: 'enterprise', limitPerHour: 1.5 },
      { workspaceId: 'c', plan: 'enterprise', limitPerHour: 3_600_001 },
      { workspaceId: 'd', plan: 'enterprise', limitPerHour: 3_600_000 },
    ]);
    expect(issues.map((issue) => issue.path)).toEqual(['0.limitPerHour', '1.limitPerHour', '2.limitPerHour']);
  });
});
