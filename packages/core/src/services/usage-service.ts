/** @module Token usage totals of a workspace's replies (`GET /api/usage`, docs/replies-and-streams.md#usage). */
import * as v from 'valibot';
import { inject, injectable } from '../di.js';
import type { Clock } from '../ports/clock.js';
import { USAGE_GROUPS, type Storage, type UsageGroup, type UsageTotal } from '../ports/storage.js';
import { TOKENS } from '../tokens.js';
import { parse, validationFailed } from '../validation.js';
import { daysBetween } from './usage-counters.js';

/** The most days one usage read spans. */
export const MAX_USAGE_DAYS = 366;

const day = (what: string) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d{2}-\d{2}$/, 'Expected a date YYYY-MM-DD.'),
    v.check((value) => !Number.isNaN(Date.parse(`${value}T00:00:00.000Z`)) && new Date(`${value}T00:00:00.000Z`).toISOString().startsWith(value), 'Expected a valid date.'),
    v.description(what),
  );

/** Query of `GET /api/usage`. */
export const UsageQuerySchema = v.strictObject({
  from: v.optional(day('First UTC day counted (YYYY-MM-DD, included); default 29 days before `to`.')),
  to: v.optional(day('Last UTC day counted (YYYY-MM-DD, included); default today.')),
  groupBy: v.optional(v.pipe(v.picklist(USAGE_GROUPS), v.description('What the totals are grouped by (default `day`).')), 'day'),
});
export type UsageQuery = v.InferInput<typeof UsageQuerySchema>;

/** Answer of `GET /api/usage`: one total per group, and the sum over all. */
export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageGroup;
  totals: UsageTotal[];
  inputTokens: number;
  outputTokens: number;
  replies: number;
}

/** Response schema of `GET /api/usage`. */
export const UsageReportSchema = v.object({
  from: v.string(),
  to: v.string(),
  groupBy: v.picklist(USAGE_GROUPS),
  totals: v.array(
    v.object({
      key: v.pipe(v.nullable(v.string()), v.description('The agent id, model name, user id (null: conversations without a user) or day, by groupBy.')),
      inputTokens: v.number(),
      outputTokens: v.number(),
      replies: v.pipe(v.number(), v.description('Reply steps counted (stored assistant messages of replies).')),
    }),
  ),
  inputTokens: v.number(),
  outputTokens: v.number(),
  replies: v.number(),
});

/**
 * Usage totals: input and output tokens of the workspace's stored reply steps (each assistant
 * message's `metadata.reply.usage`; a provider that reports none counts 0), per UTC day, read from
 * counters kept with each message — never by scanning messages.
 */
@injectable()
export class UsageService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.clock) private readonly clock: Clock,
  ) {}

  /** @throws ParleyError `validation_failed` (a bad date, `from` after `to`, more than 366 days) */
  async totals(workspaceId: string, query: UsageQuery = {}): Promise<UsageReport> {
    const fields = parse(UsageQuerySchema, query);
    const to = fields.to ?? new Date(this.clock.now()).toISOString().slice(0, 10);
    const from = fields.from ?? new Date(Date.parse(`${to}T00:00:00.000Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    if (from > to) throw validationFailed([{ path: 'from', message: 'Expected a day on or before `to`.' }]);
    if (daysBetween(from, to).length > MAX_USAGE_DAYS) throw validationFailed([{ path: 'from', message: `Expected at most ${MAX_USAGE_DAYS} days from \`from\` to \`to\`.` }]);
    const totals = await this.storage.usage.totals(workspaceId, { from, to, groupBy: fields.groupBy });
    const sum = (pick: (total: UsageTotal) => number) => totals.reduce((all, total) => all + pick(total), 0);
    return { from, to, groupBy: fields.groupBy, totals, inputTokens: sum((t) => t.inputTokens), outputTokens: sum((t) => t.outputTokens), replies: sum((t) => t.replies) };
  }
}
