/**
 * @module API keys at server start-up: `API_KEYS` upserted into the key store (memory or Redis,
 * through the same port) next to keys made with `parley keys create`; a development key only
 * on storage that dies with the process.
 */
import { hashApiKey, type BackendInfo, type Core } from '@parley/core';
import type { ApiKeyEntry } from '../cli/config.js';
import { keyPlanProblems } from '../cli/key-plans.js';
import type { Logger } from '../app/logger.js';
import { parleyCommand } from '../cli/cli-name.js';

/** What start-up did about API keys, for the banner. */
export interface ApiKeySetup {
  /** The development key, when one was created (memory storage without `API_KEYS`). */
  devKey?: string;
  /** Banner lines describing the keys. */
  lines: string[];
}

/** The `ApiKeyEntry` fields a key record takes. */
function grantOf(entry: ApiKeyEntry) {
  return {
    workspaceId: entry.workspace,
    plan: entry.plan,
    scopes: entry.scopes ?? ['*'],
    limitPerHour: entry.limitPerHour,
  };
}

/**
 * Sets up the server's API keys on `core`'s key store, whatever its kind: every `API_KEYS` entry
 * is upserted by its hash, so restarts and instances starting together store each key once (a
 * changed entry updates the stored key's grant in place). Keys already stored stay; removing an
 * entry from `API_KEYS` does not revoke its key. Without `API_KEYS`, a backend that is not durable
 * (memory) gets one development key (workspace `default`, plan `pro`, all scopes) whose raw value
 * the banner prints once; a durable one gets none (one per start would pile up), and the banner
 * says how to create one with `parley keys` — except an embedded folder (PGlite, `DATA_DIR`) that
 * holds no key yet, which gets one development key, stored, printed once.
 * @throws Error listing every key whose plan disagrees with its workspace's other keys, before
 * anything is written; ParleyError `service_unavailable` when the store cannot be reached.
 */
export async function setUpApiKeys(
  core: Core,
  storage: BackendInfo,
  entries: ApiKeyEntry[] | undefined,
): Promise<ApiKeySetup> {
  if (entries === undefined && !storage.durable) return { devKey: await issueDevelopmentKey(core), lines: [] };
  // An embedded folder (DATA_DIR) is held by this one process, so `parley keys` cannot add a key
  // while it runs: its first start stores a development key and prints it once.
  if (entries === undefined && storage.name === 'PGlite' && (await core.apiKeys.list()).length === 0) {
    return {
      devKey: await issueDevelopmentKey(core),
      lines: ['The development key below is stored in the data folder: it works across restarts.'],
    };
  }
  const configured = entries ?? [];
  const hashes = new Set(configured.map((entry) => hashApiKey(entry.key)));
  const kept = (await core.apiKeys.list()).filter((record) => !hashes.has(record.hash));
  const problems = keyPlanProblems([
    ...kept.map((record) => ({ ...record, label: `key ${record.keyId} (in ${storage.name})` })),
    ...configured.map((entry, index) => ({ ...grantOf(entry), label: `API_KEYS[${index}]` })),
  ]);
  if (problems.length > 0) {
    throw new Error(
      `API keys disagree on their workspace's plan:\n${problems.map((problem) => `  - ${problem}`).join('\n')}\n` +
        `All keys of a workspace must agree on plan and limitPerHour: change API_KEYS, or revoke the key with \`${parleyCommand()} keys revoke <keyId>\`.`,
    );
  }
  const outcomes = await upsertConfiguredKeys(core, configured);
  const total = kept.length + configured.length;
  if (total === 0 && storage.durable) {
    return {
      lines: [
        'No API keys yet: every /api and /sandbox request answers 401 until you create one. With the same',
        `${storage.name === 'Redis' ? 'REDIS_URL (or REDIS_CLUSTER_NODES) and REDIS_PREFIX' : 'DATABASE_URL and PARLEY_SCHEMA'} as this server, run:`,
        '',
        `  ${parleyCommand()} keys create --workspace default --plan pro`,
        '',
        'It prints the key once; the server sees it at once, no restart needed.',
      ],
    };
  }
  if (total === 0)
    return { lines: ['No API keys: API_KEYS is empty, so every /api and /sandbox request answers 401.'] };
  const fromConfig =
    configured.length === 0
      ? []
      : [
          `${configured.length} from API_KEYS (${outcomes.created} new, ${outcomes.updated} updated, ${outcomes.unchanged} unchanged)`,
        ];
  // `parley keys` opens the store itself, and a DATA_DIR folder only while no server holds it.
  const held = ' and the same DATA_DIR once this server has stopped (the folder serves one process at a time)';
  const list = ` List them with \`${parleyCommand()} keys list\``;
  const listing = storage.durable ? `${list}${storage.name === 'PGlite' ? held : ''}.` : '';
  return { lines: [`API keys: ${[...fromConfig, `${total} in ${storage.name} in total`].join('; ')}.${listing}`] };
}

/** Issues the development key: workspace `default`, plan `pro`, all scopes; resolves with the raw key. */
async function issueDevelopmentKey(core: Core): Promise<string> {
  return (await core.apiKeys.issue({ workspaceId: 'default', plan: 'pro', scopes: ['*'] })).key;
}

/**
 * Upserts every `API_KEYS` entry into `core`'s key store by its hash (see {@link setUpApiKeys}).
 * Also run when Redis reconnects (`startServer`), so keys from `API_KEYS` come back by themselves
 * after Redis restarted empty, without restarting Parley. Resolves with how many were created,
 * updated and left unchanged.
 * @throws ParleyError `service_unavailable` when the store cannot be reached.
 */
export async function upsertConfiguredKeys(
  core: Core,
  configured: readonly ApiKeyEntry[],
): Promise<Record<'created' | 'updated' | 'unchanged', number>> {
  const outcomes = { created: 0, updated: 0, unchanged: 0 };
  for (const entry of configured) {
    const { limitPerHour, ...grant } = grantOf(entry);
    // Through the service, which forgets its cached principals when a grant changes.
    outcomes[
      (
        await core.apiKeys.configure({ ...grant, ...(limitPerHour === undefined ? {} : { limitPerHour }) }, entry.key)
      ).outcome
    ] += 1;
  }
  return outcomes;
}

/** How many times a reconnect's re-upsert of `API_KEYS` is tried, a second apart. */
const RESTORE_KEYS_ATTEMPTS = 30;

/**
 * A listener for Redis reconnects: Redis restarted empty loses the keys of `API_KEYS`, so they are
 * stored again (upserts: a no-op when they are there), up to {@link RESTORE_KEYS_ATTEMPTS} tries a
 * second apart, and the API recovers without a restart. Logs what it did, never a key.
 */
export function restoreConfiguredKeys(core: Core, configured: readonly ApiKeyEntry[], logger: Logger): () => void {
  const restore = async (attempt: number): Promise<void> => {
    try {
      const { created } = await upsertConfiguredKeys(core, configured);
      if (created > 0) logger.warn({ created }, 'API_KEYS were missing from Redis after it reconnected: stored again');
    } catch (error) {
      if (attempt >= RESTORE_KEYS_ATTEMPTS)
        return void logger.error({ err: error }, 'could not store API_KEYS again after Redis reconnected');
      await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
      await restore(attempt + 1);
    }
  };
  return () => void restore(1);
}
