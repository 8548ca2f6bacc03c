/**
 * @module The Redis key layout: every key name the adapters use is built here and nowhere else.
 *
 * All keys of one workspace share the hash tag `{<workspace>}`, so every multi-key command and
 * script of a workspace lands on one Redis Cluster slot (the trade-off: one workspace cannot be
 * spread over several shards), and so does its rate-limit state. API keys share the tag `{keys}`.
 * Variable parts are encoded by {@link part}, which maps every string injectively to one without
 * `{`, `}` or `:` — so a workspace, agent or user id can neither break the hash tag nor make two
 * different keys collide.
 */
import type { AgentStatus, ConversationStatus, EventType } from '@parley/core';

/** The key prefix used when none is given. */
export const DEFAULT_PREFIX = 'parley:';

/**
 * A variable part of a key name: `encodeURIComponent`, extended to lone UTF-16 surrogates (which
 * it rejects with URIError, and which a JSON body can carry as `"\ud800"`) as `%uD800` — a form
 * it never produces, since `u` is not a hex digit. ASCII out, so ioredis sends the key unchanged.
 */
const part = (value: string) =>
  value.replace(/(\p{Cs})|\P{Cs}+/gu, (run, lone?: string) =>
    lone === undefined ? encodeURIComponent(run) : `%u${lone.charCodeAt(0).toString(16).toUpperCase()}`,
  );

/**
 * Checks a key prefix: it may not contain `{` or `}`, which would move the Cluster hash tag.
 * @throws TypeError for a prefix with braces.
 */
export function checkPrefix(prefix: string): string {
  if (/[{}]/.test(prefix)) throw new TypeError(`A Redis key prefix may not contain '{' or '}' (got '${prefix}').`);
  return prefix;
}

/** The keys of one workspace (`<prefix>{<workspace>}:…`). */
export interface WorkspaceKeys {
  /** What every key of the workspace starts with: `<prefix>{<workspace>}:`. */
  tag: string;
  /** STRING: the workspace's rate-limit state (GCRA's TAT in ms), also {@link rateLimitKey}. */
  rateLimit: string;
  /** HASH agent id → stored agent (stores/record-format.ts). */
  agent: string;
  /** ZSET (score 0, member agent id): every agent, lexicographic = creation order. */
  agents: string;
  agentsByStatus(status: AgentStatus): string;
  /** SET of agent ids whose cascade delete has started but not finished. */
  cascades: string;
  /** HASH conversation id → stored conversation (stores/record-format.ts). */
  conv: string;
  /** HASH conversation id → its owner `[agentId, userId]` as JSON: which agent and user indexes hold it. */
  convOwner: string;
  /** ZSET (score 0, member conversation id): every conversation. */
  convs: string;
  convsByStatus(status: ConversationStatus): string;
  convsByAgent(agentId: string, status?: ConversationStatus): string;
  convsByUser(userId: string, status?: ConversationStatus): string;
  /** HASH message id → message JSON, one per conversation. */
  msg(conversationId: string): string;
  /** ZSET (score 0, member message id): the conversation's history in id order. */
  msgs(conversationId: string): string;
  /** HASH counter field → integer: the usage counters of one UTC day (`usageIncrements` of `@parley/core`). */
  usage(day: string): string;
  /** HASH endpoint id → stored webhook endpoint, secret included (stores/record-format.ts). */
  webhook: string;
  /** ZSET (score 0, member endpoint id). */
  webhooks: string;
  /** HASH event id → event JSON: the event log's records. */
  event: string;
  /** ZSET (score = commit sequence, member = event id): the event log in commit order. */
  events: string;
  /** ZSET like {@link events}, only the events of one type. */
  eventsOfType(type: EventType): string;
  /** STRING: the last commit sequence number handed out (INCR). */
  eventSeq: string;
  /** LIST of event ids recorded and not yet handed on, in commit order (RPUSH, popped by acks). */
  outbox: string;
  /** STRING (with a TTL): the receipt of the taker holding the outbox, if any. */
  outboxLock: string;
  /** HASH attempt id → delivery attempt JSON, one per endpoint. */
  delivery(endpointId: string): string;
  /** ZSET (score 0, member attempt id): the endpoint's attempts in id order. */
  deliveries(endpointId: string): string;
  /** ZSET (score = when the last 2xx was recorded, ms; member event id): events delivered once. */
  delivered(endpointId: string): string;
}

/** How many workspaces' key names {@link workspaceKeys} keeps built per prefix; past it, it starts over. */
const WORKSPACE_KEYS_CACHED = 10_000;
const builtKeys = new Map<string, Map<string, WorkspaceKeys>>();

/**
 * The key names of `workspaceId` under `prefix`: built once per workspace (every call of a store
 * needs them; building costs a few dozen strings), then shared — the object is frozen.
 */
export function workspaceKeys(prefix: string, workspaceId: string): WorkspaceKeys {
  let ofPrefix = builtKeys.get(prefix);
  if (ofPrefix === undefined) builtKeys.set(prefix, (ofPrefix = new Map()));
  let keys = ofPrefix.get(workspaceId);
  if (keys === undefined) {
    if (ofPrefix.size >= WORKSPACE_KEYS_CACHED) ofPrefix.clear();
    ofPrefix.set(workspaceId, (keys = Object.freeze(buildWorkspaceKeys(prefix, workspaceId))));
  }
  return keys;
}

function buildWorkspaceKeys(prefix: string, workspaceId: string): WorkspaceKeys {
  const base = `${prefix}{${part(workspaceId)}}:`;
  const withStatus = (key: string, status?: string) => (status === undefined ? key : `${key}:status:${status}`);
  return {
    tag: base,
    rateLimit: `${base}rl`,
    agent: `${base}agent`,
    agents: `${base}agents`,
    agentsByStatus: (status) => `${base}agents:status:${status}`,
    cascades: `${base}cascades`,
    conv: `${base}conv`,
    convOwner: `${base}conv:owner`,
    convs: `${base}convs`,
    convsByStatus: (status) => `${base}convs:status:${status}`,
    convsByAgent: (agentId, status) => withStatus(`${base}convs:agent:${part(agentId)}`, status),
    convsByUser: (userId, status) => withStatus(`${base}convs:user:${part(userId)}`, status),
    msg: (conversationId) => `${base}msg:${part(conversationId)}`,
    msgs: (conversationId) => `${base}msgs:${part(conversationId)}`,
    usage: (day) => `${base}usage:${day}`,
    webhook: `${base}webhook`,
    webhooks: `${base}webhooks`,
    event: `${base}event`,
    events: `${base}events`,
    eventsOfType: (type) => `${base}events:type:${part(type)}`,
    eventSeq: `${base}events:seq`,
    outbox: `${base}outbox`,
    outboxLock: `${base}outbox:lock`,
    // `part` leaves no ':' in the endpoint id, so the suffixes cannot be faked by one.
    delivery: (endpointId) => `${base}dlv:${part(endpointId)}`,
    deliveries: (endpointId) => `${base}dlv:${part(endpointId)}:ids`,
    delivered: (endpointId) => `${base}dlv:${part(endpointId)}:ok`,
  };
}

/** The keys of the global API key store (`<prefix>{keys}:…`, one Cluster slot). */
export interface ApiKeyKeys {
  /** HASH SHA-256 hex → API key record JSON. */
  byHash: string;
  /** HASH key id → SHA-256 hex. */
  byId: string;
  /** ZSET (score = createdAt in ms, member = key id): every key. */
  all: string;
  /** ZSET like `all`, for one workspace. */
  byWorkspace(workspaceId: string): string;
}

/** The API key store's key names under `prefix`. */
export function apiKeyKeys(prefix: string): ApiKeyKeys {
  const base = `${prefix}{keys}:`;
  return {
    byHash: `${base}byhash`,
    byId: `${base}byid`,
    all: `${base}all`,
    byWorkspace: (workspaceId) => `${base}ws:${part(workspaceId)}`,
  };
}

/**
 * The STRING holding one rate-limit key's GCRA state (`<prefix>{<key>}:rl`). The key is a
 * workspace id, so the state shares the workspace's hash tag: a script of the workspace decides
 * the request's rate limit in the same step as its read or write (a gated script, script.ts).
 */
export function rateLimitKey(prefix: string, key: string): string {
  return workspaceKeys(prefix, key).rateLimit;
}

/**
 * The HASH holding one `Idempotency-Key` of a workspace (`<prefix>{<workspace>}:idem:<sha256>`):
 * the key is hashed, so any 255 visible characters make a short key name of fixed length.
 */
export function idempotencyKey(prefix: string, workspaceId: string, keyHash: string): string {
  return `${prefix}{${part(workspaceId)}}:idem:${part(keyHash)}`;
}

/**
 * The outbox's global keys (`<prefix>{parley:outbox}:…`): how takers find workspaces with events
 * to hand on across a Cluster. No workspace can share the tag: `part` encodes every `:`.
 */
export interface OutboxKeys {
  /** SET of every workspace that ever recorded an event (the sweep's list). */
  workspaces: string;
  /** ZSET (score = first hint time in ms, member = workspace id): workspaces hinted to have events. */
  dirty: string;
}

/** The outbox's global key names under `prefix`. */
export function outboxKeys(prefix: string): OutboxKeys {
  const base = `${prefix}{parley:outbox}:`;
  return { workspaces: `${base}workspaces`, dirty: `${base}dirty` };
}

/**
 * The SET of the record upgrades applied under `prefix` (`<prefix>{parley:upgrades}`): each name is
 * added once every record it rewrites is in the new shape (stores/upgrades.ts).
 */
export function upgradesKey(prefix: string): string {
  return `${prefix}{parley:upgrades}`;
}

/**
 * The delivery queue's keys (`<prefix>{parley:deliveries}:…`): one hash tag, so its scripts, which move
 * jobs between them, run on one Cluster slot.
 */
export interface DeliveryQueueKeys {
  /** STREAM of first attempts (field `job` = job JSON), consumer group `workers`. */
  first: string;
  /** STREAM of retries that fell due, consumer group `workers`. */
  retry: string;
  /** ZSET of retries not yet due: member = job JSON, score = due time (ms since the epoch). */
  scheduled: string;
}

/** The delivery queue's key names under `prefix`. */
export function deliveryQueueKeys(prefix: string): DeliveryQueueKeys {
  const base = `${prefix}{parley:deliveries}:`;
  return { first: `${base}first`, retry: `${base}retry`, scheduled: `${base}scheduled` };
}
