/** @module Token usage totals of a workspace's replies (`GET /api/usage`, docs/replies-and-streams.md#usage). */
import * as v from 'valibot';
import { inject, injectable } from '../di.js';
import type { Clock } from '../ports/clock.js';
import { USAGE_GROUPS, type Storage, type UsageGroup, type UsageTotal } from '../ports/storage.js';
import { TOKENS } from '../tokens.js';
import { parse, validationFailed } from '../validation.js';
import { daysBetween } from './usage-counters.js';
import type { WorkspaceScope } from '../ports/scope.js';

/** The most days one usage read spans. */
export const MAX_USAGE_DAYS = 366;

/**
 * A date (`2026-11-27`) or an ISO 8601 timestamp with a time zone (`2026-11-27T10:00:00.000Z`,
 * `2026-11-27T12:00+02:00`). In a URL query an unencoded `+` arrives as a space, so a space stands
 * for `+` before an offset.
 */
const DAY_OR_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+ -](\d{2}):?(\d{2})))?$/;
const DAY_OR_TIMESTAMP_MESSAGE = 'Expected a date YYYY-MM-DD or an ISO 8601 timestamp with a time zone (Z or ±hh:mm).';

/**
 * The UTC day (`YYYY-MM-DD`) of a date, or of the instant an ISO 8601 timestamp names (its offset
 * applied); `null` when the value is not one, names a day or time that does not exist, or an
 * instant outside the years 0000–9999.
 */
function utcDayOf(value: string): string | null {
  const match = DAY_OR_TIMESTAMP.exec(value);
  if (!match) return null;
  const [, year, month, date, hours = '0', minutes = '0', seconds = '0', zone = 'Z'] = match;
  const [offsetHours = '0', offsetMinutes = '0'] = match.slice(8);
  const day = new Date(`${year}-${month}-${date}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || !day.toISOString().startsWith(`${year}-${month}-${date}`)) return null;
  if (+hours > 23 || +minutes > 59 || +seconds > 59 || +offsetHours > 23 || +offsetMinutes > 59) return null;
  // Fractions of a second never move the instant to another day: the offset is whole minutes.
  const offset = zone === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (+offsetHours * 60 + +offsetMinutes);
  const instant = new Date(day.getTime() + ((+hours * 60 + +minutes - offset) * 60 + +seconds) * 1000).toISOString();
  // An offset can move the first or last day of year 0000 or 9999 out of four-digit years.
  return /^\d{4}-/.test(instant) ? instant.slice(0, 10) : null;
}

/** A `from` / `to` query value: a date or a timestamp, parsed into the UTC day it counts from or to. */
const day = (what: string) =>
  v.pipe(
    v.string(),
    v.description(what),
    v.regex(DAY_OR_TIMESTAMP, DAY_OR_TIMESTAMP_MESSAGE),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const utc = utcDayOf(dataset.value);
      if (utc === null) {
        addIssue({ message: 'Expected a day and time that exist.' });
        return NEVER;
      }
      return utc;
    }),
  );

/** Query of `GET /api/usage`. */
export const UsageQuerySchema = v.strictObject({
  from: v.optional(
    day(
      'First UTC day counted (included; default 29 days before `to`): a date YYYY-MM-DD, or an ISO 8601 timestamp with ' +
        'a time zone (Z or ±hh:mm), which counts from the start of the UTC day containing it.',
    ),
  ),
  to: v.optional(
    day(
      'Last UTC day counted (included; default today): a date YYYY-MM-DD, or an ISO 8601 timestamp with a time zone ' +
        '(Z or ±hh:mm), which counts to the end of the UTC day containing it.',
    ),
  ),
  groupBy: v.optional(
    v.pipe(v.picklist(USAGE_GROUPS), v.description('What the totals are grouped by (default `day`).')),
    'day',
  ),
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
      key: v.pipe(
        v.nullable(v.string()),
        v.description('The agent id, model name, user id (null: conversations without a user) or day, by groupBy.'),
      ),
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
  async totals(scope: WorkspaceScope, query: UsageQuery = {}): Promise<UsageReport> {
    const fields = parse(UsageQuerySchema, query);
    const to = fields.to ?? new Date(this.clock.now()).toISOString().slice(0, 10);
    const from =
      fields.from ?? new Date(Date.parse(`${to}T00:00:00.000Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    if (from > to) throw validationFailed([{ path: 'from', message: 'Expected a day on or before `to`.' }]);
    if (daysBetween(from, to).length > MAX_USAGE_DAYS)
      throw validationFailed([
        { path: 'from', message: `Expected at most ${MAX_USAGE_DAYS} days from \`from\` to \`to\`.` },
      ]);
    const totals = await this.storage.usage.totals(scope, { from, to, groupBy: fields.groupBy });
    const sum = (pick: (total: UsageTotal) => number) => totals.reduce((all, total) => all + pick(total), 0);
    return {
      from,
      to,
      groupBy: fields.groupBy,
      totals,
      inputTokens: sum((t) => t.inputTokens),
      outputTokens: sum((t) => t.outputTokens),
      replies: sum((t) => t.replies),
    };
  }
}
