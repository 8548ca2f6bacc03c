/**
 * @module The console's link to the API: the typed client over `../api` (the API the console is
 * served beside), the key kept in `sessionStorage` only, the rate-limit state read from each
 * response, and what the key's scopes allow.
 */
import {
  createParleyClient,
  isParleyApiError,
  isParleyNetworkError,
  type CallingKey,
  type ParleyClient,
} from '@parley/client';

/** Where the API is: the console is served at `<prefix>/console/`, the API at `<prefix>/api`. */
export const apiBase = new URL('../', window.location.href).href;

const STORAGE_KEY = 'parley.console.apiKey';

/** The key of this tab's session, if one was pasted (`sessionStorage`: gone when the tab closes). */
export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function storeKey(key: string | null): void {
  try {
    if (key === null) window.sessionStorage.removeItem(STORAGE_KEY);
    else window.sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode): the key then lives in memory until the page is left.
  }
}

/** The rate-limit state of the latest response (draft-ietf-httpapi-ratelimit-headers). */
export interface RateLimitState {
  policy: string;
  limit: number | null;
  windowSeconds: number | null;
  remaining: number | null;
  resetSeconds: number | null;
  at: number;
}

const rateListeners = new Set<(state: RateLimitState) => void>();

/** Calls `listener` with the rate-limit state of every later response; returns the unsubscribe. */
export function onRateLimit(listener: (state: RateLimitState) => void): () => void {
  rateListeners.add(listener);
  return () => rateListeners.delete(listener);
}

/** `"pro";q=1000;w=3600` → `{name: 'pro', q: 1000, w: 3600}`. */
function parameters(field: string): { name: string; values: Record<string, number> } {
  const [name = '', ...rest] = field.split(';');
  const values: Record<string, number> = {};
  for (const part of rest) {
    const [key, value] = part.trim().split('=');
    if (key && value !== undefined && Number.isFinite(Number(value))) values[key] = Number(value);
  }
  return { name: name.trim().replace(/^"|"$/g, ''), values };
}

function recordRateLimit(headers: Headers): void {
  const policy = headers.get('RateLimit-Policy');
  const state = headers.get('RateLimit');
  if (!policy || !state) return;
  const p = parameters(policy);
  const s = parameters(state);
  const result: RateLimitState = {
    policy: p.name,
    limit: p.values.q ?? null,
    windowSeconds: p.values.w ?? null,
    remaining: s.values.r ?? null,
    resetSeconds: s.values.t ?? null,
    at: Date.now(),
  };
  for (const listener of rateListeners) listener(result);
}

/** A client calling the API with `apiKey`; every response's rate-limit fields are recorded. */
export function clientFor(apiKey: string): ParleyClient {
  return createParleyClient({
    baseUrl: apiBase,
    apiKey,
    fetch: async (request) => {
      const response = await window.fetch(request);
      recordRateLimit(response.headers);
      return response;
    },
  });
}

/** A signed-in session: the client and what its key grants. */
export interface Session {
  client: ParleyClient;
  key: CallingKey;
}

/** The scopes of Parley (docs/authentication.md) and what each allows in the console. */
export const SCOPE_HELP: Record<string, string> = {
  'agents:read': 'list agents and read usage',
  'agents:write': 'create, edit, activate and delete agents',
  'conversations:read': 'read conversations, messages and live streams',
  'conversations:write': 'start, complete and delete conversations, send messages, answer tool calls',
  'webhooks:read': 'list webhook endpoints and their deliveries',
  'webhooks:write': 'create, edit, test and delete webhook endpoints, redeliver events',
  'events:read': 'read the event log',
};

/** Whether the session's key holds `scope` (or `*`). */
export function can(session: Session, scope: string): boolean {
  return session.key.scopes.includes('*') || session.key.scopes.includes(scope as never);
}

/** Why an action is disabled, when the key lacks `scope`; `undefined` when it is allowed. */
export function lacking(session: Session, scope: string): string | undefined {
  return can(session, scope) ? undefined : `Your key lacks the ${scope} scope.`;
}

/** What went wrong, in the service's words: message, validation issues, request id. */
export interface Problem {
  message: string;
  issues: Array<{ path: string; message: string }>;
  requestId: string | undefined;
}

/** Turns anything thrown by the client (or by JSON.parse in a form) into a {@link Problem}. */
export function problemOf(error: unknown): Problem {
  if (isParleyApiError(error)) {
    return {
      message: `${error.message} (${error.status} ${error.code})`,
      issues: error.details?.issues ?? [],
      requestId: error.requestId,
    };
  }
  if (isParleyNetworkError(error)) {
    return { message: `The server did not answer: ${error.message}`, issues: [], requestId: undefined };
  }
  return { message: error instanceof Error ? error.message : String(error), issues: [], requestId: undefined };
}

/** The agent model names the server accepts, from its OpenAPI document (empty when unavailable). */
export async function agentModels(): Promise<string[]> {
  try {
    const response = await window.fetch(new URL('openapi.json', apiBase));
    if (!response.ok) return [];
    const document = (await response.json()) as {
      components?: { schemas?: { AgentCreate?: { properties?: { model?: { enum?: unknown } } } } };
    };
    const models = document.components?.schemas?.AgentCreate?.properties?.model?.enum;
    return Array.isArray(models) ? models.filter((model): model is string => typeof model === 'string') : [];
  } catch {
    return [];
  }
}
