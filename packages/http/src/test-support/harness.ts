/**
 * @module Test helpers: an app over fresh adapters (memory, or whatever {@link useAdapters}
 * installed, e.g. Redis) with keys of every kind, and a logger whose lines a test can read. Not built.
 */
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, type Adapters, type Core, type CoreSettings, type Scope } from '@parley/core';
import { StaticHostResolver } from '@parley/core/testing';
import type { Hono } from 'hono';
import { Writable } from 'node:stream';
import { createApp, type AppOptions } from '../app/app.js';
import type { ParleyEnv } from '../app/env.js';
import { createLogger, type LogLevel, type Logger } from '../app/logger.js';

/** What a harness runs on: an adapter bundle. */
export type HarnessAdapters = Adapters;

let makeAdapters: () => HarnessAdapters | Promise<HarnessAdapters> = memoryAdapters;

/**
 * Makes every later `harness()` call without explicit adapters use `factory` (one fresh set per
 * harness). Module state, so it lasts for the calling test file only (vitest isolates files).
 */
export function useAdapters(factory: () => HarnessAdapters | Promise<HarnessAdapters>): void {
  makeAdapters = factory;
}

/** A fresh app over fresh adapters, with keys to call it. */
export interface Harness {
  core: Core;
  app: Hono<ParleyEnv>;
  adapters: HarnessAdapters;
  /** All scopes, workspace `ws1`. */
  key: string;
  /** All scopes, workspace `ws2`. */
  otherKey: string;
  /** Issues a key of `ws1` with exactly `scopes`. */
  keyWith(scopes: Array<Scope | '*'>): Promise<string>;
  /** `app.request()` with the key, JSON body and extra headers. */
  call(method: string, path: string, init?: CallInit): Promise<Response>;
}

/** Options of {@link Harness.call}. */
export interface CallInit {
  /** Bearer key; default the harness's `key`; `null` sends no Authorization header. */
  key?: string | null;
  /** Serialized as JSON with `Content-Type: application/json` unless `raw` is given. */
  json?: unknown;
  /** Sent as is (no Content-Type added). */
  raw?: NonNullable<RequestInit['body']>;
  headers?: Record<string, string>;
}

/**
 * An app with `options` (logging silenced unless a `logger` is given) over `given` adapters, or
 * over a fresh set from the {@link useAdapters} factory (memory by default), and a core with `settings`.
 */
export async function harness(
  options: AppOptions = {},
  given?: HarnessAdapters,
  settings: CoreSettings = {},
): Promise<Harness> {
  const adapters = given ?? (await makeAdapters());
  // No network in tests: webhook host names resolve from `settings.hostResolver` or not at all.
  const core = createCore(adapters, { hostResolver: new StaticHostResolver(), ...settings });
  const app = createApp(core, { logLevel: 'silent', ...options });
  // Configured (stored once by hash), so several harnesses over one shared store share the keys.
  const [key, otherKey] = ['test-key-ws1-all-scopes', 'test-key-ws2-all-scopes'];
  await core.apiKeys.configure({ workspaceId: 'ws1', plan: 'pro' }, key);
  await core.apiKeys.configure({ workspaceId: 'ws2', plan: 'pro' }, otherKey);
  let issued = 0;
  const keyWith = async (scopes: Array<Scope | '*'>) =>
    (await core.apiKeys.issue({ workspaceId: 'ws1', plan: 'pro', scopes }, `test-key-limited-${++issued}`)).key;
  const call = (method: string, path: string, init: CallInit = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const bearer = init.key === undefined ? key : init.key;
    if (bearer !== null) headers.Authorization ??= `Bearer ${bearer}`;
    let body: NonNullable<RequestInit['body']> | undefined = init.raw;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['Content-Type'] ??= 'application/json';
    }
    const stream = typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
    return Promise.resolve(
      app.request(path, { method, headers, body, ...(stream ? { duplex: 'half' } : {}) } as RequestInit),
    );
  };
  return { core, app, adapters, key, otherKey, keyWith, call };
}

/** The JSON body of a response (fails the test on a non-JSON body). */
export async function json<T = any>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** A valid agent create body. */
export const agentInput = { name: 'Ada', description: 'Answers billing questions', model: 'modelA-4' } as const;

/** A logger at `level` (default `info`) whose JSON lines land, parsed, in `lines`. */
export function captureLogs(level: LogLevel = 'info'): { lines: Array<Record<string, unknown>>; logger: Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger(level, stream) };
}
