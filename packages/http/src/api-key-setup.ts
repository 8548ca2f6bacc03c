/**
 * @module API keys at server start-up: `API_KEYS` issued into memory, or upserted into Redis
 * next to keys made with `parley keys create`; a development key only on memory storage.
 */
import type { RedisApiKeyStore } from '@parley/adapter-redis';
import { TOKENS, hashApiKey, planEntryIssues, type ApiKeyRecord, type Core, type IdGenerator, type PlanEntry } from '@parley/core';
import type { ApiKeyEntry } from './config.js';

/** What start-up did about API keys, for the banner. */
export interface ApiKeySetup {
  /** The development key, when one was created (memory storage without `API_KEYS`). */
  devKey?: string;
  /** Banner lines describing the keys. */
  lines: string[];
}

/** A plan entry with how to name it in a message (`API_KEYS[2]`, `key key_…`). */
export type LabelledPlanEntry = PlanEntry & { label: string };

/**
 * Core's plan rules (decisions §7) over `entries`, as messages naming entries by label: all keys
 * of a workspace agree on `plan` and `limitPerHour`, `enterprise` needs a limit. `[]` when none.
 */
export function keyPlanProblems(entries: ReadonlyArray<LabelledPlanEntry>): string[] {
  const label = (index: string | number) => entries[Number(index)]?.label ?? `entry ${index}`;
  return planEntryIssues(entries).map(({ path, message }) => {
    const named = message.replace(/ at (\d+) but /, (_, first: string) => ` in ${label(first)} but `).replace(/ here$/, '');
    return `${label(path.split('.')[0]!)}: ${named}.`;
  });
}

/** The `ApiKeyEntry` fields a key record takes. */
function grantOf(entry: ApiKeyEntry) {
  return { workspaceId: entry.workspace, plan: entry.plan, scopes: entry.scopes ?? ['*'], limitPerHour: entry.limitPerHour };
}

/**
 * Memory storage: issues every `API_KEYS` entry, or with none one development key (workspace
 * `default`, plan `pro`, all scopes) whose raw value the banner prints once.
 */
export async function setUpMemoryKeys(core: Core, entries: ApiKeyEntry[] | undefined): Promise<ApiKeySetup> {
  if (entries === undefined) {
    const { key } = await core.apiKeys.issue({ workspaceId: 'default', plan: 'pro', scopes: ['*'] });
    return { devKey: key, lines: [] };
  }
  for (const entry of entries) await core.apiKeys.issue(grantOf(entry), entry.key);
  return { lines: [`API keys: ${entries.length} from API_KEYS.`] };
}

/**
 * Redis: upserts every `API_KEYS` entry by its hash, so restarts and instances starting together
 * store each key once (a changed entry updates the stored key's grant in place). Keys already in
 * Redis stay; removing an entry from `API_KEYS` does not revoke its key. No development key is
 * made: it would pile up in shared storage with every start. Instead the banner says how to
 * create a key when there is none.
 * @throws Error listing every key whose plan disagrees with its workspace's other keys, before
 * anything is written; ParleyError `service_unavailable` when Redis cannot be reached.
 */
export async function setUpRedisKeys(core: Core, store: RedisApiKeyStore, entries: ApiKeyEntry[] = []): Promise<ApiKeySetup> {
  const configured = new Set(entries.map((entry) => hashApiKey(entry.key)));
  const kept = (await store.list()).filter((record) => !configured.has(record.hash));
  const problems = keyPlanProblems([
    ...kept.map((record) => ({ ...record, label: `key ${record.keyId} (in Redis)` })),
    ...entries.map((entry, index) => ({ ...grantOf(entry), label: `API_KEYS[${index}]` })),
  ]);
  if (problems.length > 0) {
    throw new Error(
      `API keys disagree on their workspace's plan:\n${problems.map((problem) => `  - ${problem}`).join('\n')}\n` +
        'All keys of a workspace must agree on plan and limitPerHour: change API_KEYS, or revoke the key with `parley keys revoke <keyId>`.',
    );
  }
  const ids = core.container.resolve<IdGenerator>(TOKENS.ids);
  const outcomes = { created: 0, updated: 0, unchanged: 0 };
  for (const entry of entries) {
    const { limitPerHour, ...grant } = grantOf(entry);
    const record: ApiKeyRecord = {
      keyId: ids.next('key'),
      ...grant,
      ...(limitPerHour === undefined ? {} : { limitPerHour }),
      hash: hashApiKey(entry.key),
      createdAt: new Date(core.clock.now()).toISOString(),
    };
    outcomes[(await store.upsert(record)).outcome] += 1;
  }
  const total = kept.length + entries.length;
  if (total === 0) {
    return {
      lines: [
        'No API keys yet: every /api and /sandbox request answers 401 until you create one. With the same',
        'REDIS_URL (or REDIS_CLUSTER_NODES) and REDIS_PREFIX as this server, run:',
        '',
        '  parley keys create --workspace default --plan pro',
        '',
        'It prints the key once; the server sees it at once, no restart needed.',
      ],
    };
  }
  const fromConfig = entries.length === 0 ? [] : [`${entries.length} from API_KEYS (${outcomes.created} new, ${outcomes.updated} updated, ${outcomes.unchanged} unchanged)`];
  return { lines: [`API keys: ${[...fromConfig, `${total} in Redis in total`].join('; ')}. List them with \`parley keys list\`.`] };
}
