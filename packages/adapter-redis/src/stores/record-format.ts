/**
 * @module How agents, conversations and webhook endpoints are stored on Redis, so that a change
 * (ports/storage.ts `Change`) is merged inside one Lua script without decoding JSON in Lua.
 *
 * A record is one HASH value: its version, then one `"field":json` segment per top-level field,
 * each preceded by the byte 0x1F (unit separator). JSON.stringify never writes a raw control
 * character (it escapes them inside strings), so 0x1F can only be a separator; the record's JSON is
 * `{` + the segments joined by `,` + `}`. A script merges a change by replacing whole segments, reads
 * a field for a condition by its segment, and builds an event's `data` by joining them.
 *
 * Why not cjson: Redis's cjson rejects the lone UTF-16 surrogates (`"\ud800"`) JSON.stringify writes
 * and a JSON body may carry, turns `[]` and `{}` into one another on the way back, and re-encodes
 * numbers with 14 significant digits; segments are never decoded in Lua, so what was stored is
 * what comes back, byte for byte.
 */
import { withVersion, type Change, type Condition } from '@parley/core/adapter';

/** The separator between a record's version and its field segments (see the module's doc). */
export const FIELD_SEPARATOR = '\x1f';

/** `"name":json` of each top-level field of `fields` whose value is not `undefined`. */
export function segments(fields: object): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) out.push(`${JSON.stringify(name)}:${JSON.stringify(value)}`);
  }
  return out;
}

/** The stored form of a new record (version 1 unless given). */
export function encodeRecord(record: object, version = 1): string {
  return [String(version), ...segments(record)].join(FIELD_SEPARATOR);
}

/** The record a stored value stands for, a fresh copy carrying its version (`recordVersion`). */
export function decodeRecord<T extends object>(stored: string): T {
  const at = stored.indexOf(FIELD_SEPARATOR);
  const record = JSON.parse(`{${stored.slice(at + 1).replaceAll(FIELD_SEPARATOR, ',')}}`) as T;
  return withVersion(record, Number(stored.slice(0, at)));
}

/** Decodes each stored value of a script's reply. */
export function decodeRecords<T extends object>(rows: readonly string[]): T[] {
  return rows.map((row) => decodeRecord<T>(row));
}

/**
 * A condition as a script reads it: `=` or `<`, the field, the JSON of the value — compared as
 * bytes with the field's stored JSON (equal JSON of a string, boolean or null is equal bytes; two
 * quoted ISO 8601 timestamps of one width compare as their instants).
 */
function encodeCondition<T>(condition: Condition<T>): string {
  const [op, value] = 'equals' in condition ? ['=', condition.equals] : ['<', condition.before];
  return [op, condition.field, JSON.stringify(value)].join(FIELD_SEPARATOR);
}

/** The arguments of `RECORD_UPDATE` (records.lua.ts) for `change`; a change never moves a record to another id. */
export function changeArgs<T>(change: Change<T>) {
  return {
    set: segments({ ...change.set, id: undefined }),
    touch: change.touch === undefined ? '' : JSON.stringify(change.touch),
    bump: change.keepVersion ? 0 : 1,
    ...conditionArgs(change),
  };
}

/** The arguments of a script's `meets()` (records.lua.ts) for these preconditions. */
export function conditionArgs<T>({
  ifVersion,
  where,
}: {
  ifVersion?: readonly number[];
  where?: readonly Condition<T>[];
}) {
  return {
    hasIfVersion: ifVersion === undefined ? '0' : '1',
    ifVersion: ifVersion ?? [],
    where: (where ?? []).map(encodeCondition),
  };
}
