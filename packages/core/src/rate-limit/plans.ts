/** @module The plan table (docs/rate-limits.md) and the start-up checks of key entries against it. */
import type { ValidationIssue } from '../errors.js';
import type { RateLimitRule } from '../ports/rate-limit.js';
import type { Plan, Principal } from '../types.js';

/** One hour in milliseconds: the window of every built-in plan and of `limitPerHour`. */
export const HOUR_MS = 3_600_000;

/**
 * The rule of each plan. `enterprise` has no default: its limit comes from each key entry's
 * `limitPerHour` (docs/rate-limits.md); set it here only to give enterprise keys without one a limit.
 */
export interface PlanRules {
  free: RateLimitRule;
  pro: RateLimitRule;
  enterprise?: RateLimitRule;
}

/** Spec §8: Free 100 and Pro 1 000 requests per hour. */
export const DEFAULT_PLAN_RULES: Readonly<PlanRules> = Object.freeze({
  free: Object.freeze({ limit: 100, periodMs: HOUR_MS }),
  pro: Object.freeze({ limit: 1000, periodMs: HOUR_MS }),
});

/**
 * The built-in table with `overrides` applied; an override given as `undefined` keeps the
 * default. Throws `RangeError` for a rule that is not valid (see {@link ruleIssue}), so a bad
 * configuration fails at start-up rather than per request.
 */
export function planRules(overrides: Partial<PlanRules> = {}): PlanRules {
  // A spread would let `{ free: undefined }` erase Free's rule, and every Free request would fail.
  const given = Object.entries(overrides).filter(([, rule]) => rule !== undefined);
  const rules: PlanRules = { ...DEFAULT_PLAN_RULES, ...Object.fromEntries(given) };
  for (const [plan, rule] of Object.entries(rules) as Array<[Plan, RateLimitRule | undefined]>) {
    if (rule === undefined) continue;
    const problem = ruleIssue(rule);
    if (problem) throw new RangeError(`Plan '${plan}': ${problem}`);
  }
  return rules;
}

/**
 * Why `rule` cannot be used, or `null`. A rule needs an integer `limit ≥ 1` and an integer
 * `periodMs` that is a whole number of seconds (the `w` of the `RateLimit-Policy` header is in
 * seconds) and at least `limit` ms (so the emission interval is at least 1 ms).
 */
export function ruleIssue(rule: RateLimitRule): string | null {
  const { limit, periodMs } = rule;
  if (!Number.isSafeInteger(limit) || limit < 1) return `limit must be an integer ≥ 1, got ${limit}`;
  if (!Number.isSafeInteger(periodMs) || periodMs < 1000 || periodMs % 1000 !== 0) {
    return `periodMs must be a whole number of seconds in ms, got ${periodMs}`;
  }
  if (limit > periodMs) return `limit ${limit} exceeds one request per ms over ${periodMs} ms`;
  return null;
}

/**
 * The rule that applies to `principal`: its `limitPerHour` per hour when set (enterprise keys,
 * or an override on any plan), else its plan's rule. Throws a plain `Error` (a configuration
 * fault, logged as a 500) for a `limitPerHour` that is not an integer from 1 to 3 600 000, and
 * for an enterprise key without `limitPerHour` and no table default.
 */
export function ruleFor(
  principal: Pick<Principal, 'plan' | 'limitPerHour'>,
  plans: PlanRules = DEFAULT_PLAN_RULES,
): RateLimitRule {
  if (principal.limitPerHour !== undefined) {
    // Checked here too, not only at start-up: a key from code or from a store bypasses that check,
    // and an invalid rule would otherwise fail inside the store and pass for a store outage.
    const problem = limitPerHourIssue(principal.limitPerHour);
    if (problem) throw new Error(`Invalid key: ${problem}, got ${principal.limitPerHour}`);
    return { limit: principal.limitPerHour, periodMs: HOUR_MS };
  }
  const rule = plans[principal.plan];
  if (!rule) throw new Error(`No rate limit for plan '${principal.plan}': give the key a limitPerHour`);
  return rule;
}

/** What the start-up check needs of a key entry (an `API_KEYS` item, an `ApiKeyRecord`). */
export interface PlanEntry {
  workspaceId: string;
  plan: Plan;
  limitPerHour?: number | undefined;
}

/**
 * Every problem with a set of key entries, `[]` when none (docs/rate-limits.md): all entries of one
 * workspace must agree on `plan` and `limitPerHour`; `enterprise` needs `limitPerHour`;
 * `limitPerHour` must be an integer from 1 to 3 600 000. Paths are the entry's index in
 * `entries`, then the field (`"2.limitPerHour"`).
 */
export function planEntryIssues(entries: ReadonlyArray<PlanEntry>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const firstOf = new Map<string, number>();
  entries.forEach((entry, index) => {
    const { limitPerHour } = entry;
    const problem = limitPerHour === undefined ? null : limitPerHourIssue(limitPerHour);
    if (problem) {
      issues.push({ path: `${index}.limitPerHour`, message: problem });
    } else if (entry.plan === 'enterprise' && limitPerHour === undefined) {
      issues.push({ path: `${index}.limitPerHour`, message: `plan 'enterprise' needs limitPerHour` });
    }
    const first = firstOf.get(entry.workspaceId);
    if (first === undefined) {
      firstOf.set(entry.workspaceId, index);
      return;
    }
    const other = entries[first]!;
    if (other.plan !== entry.plan) {
      issues.push({
        path: `${index}.plan`,
        message: `workspace '${entry.workspaceId}' has plan '${other.plan}' at ${first} but '${entry.plan}' here`,
      });
    } else if (other.limitPerHour !== limitPerHour) {
      issues.push({
        path: `${index}.limitPerHour`,
        message: `workspace '${entry.workspaceId}' has limitPerHour ${other.limitPerHour ?? 'unset'} at ${first} but ${limitPerHour ?? 'unset'} here`,
      });
    }
  });
  return issues;
}

/** Why `limitPerHour` cannot be a key's hourly rule, or `null`. */
function limitPerHourIssue(limitPerHour: number): string | null {
  return ruleIssue({ limit: limitPerHour, periodMs: HOUR_MS }) === null
    ? null
    : `limitPerHour must be an integer from 1 to ${HOUR_MS}`;
}
