/**
 * @module The reference pages say what the code does: docs/api.md's route table lists every
 * operation of the OpenAPI document (so of the app), every `METHOD /path` the documentation names
 * is a route the app has, and the event-type tables list exactly core's `EVENT_TYPES`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryAdapters } from '@parley/adapter-memory';
import { createCore, EVENT_TYPES } from '@parley/core';
import { createApp } from '@parley/http';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (page: string) => readFileSync(join(root, page), 'utf8');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}/README.md`),
].filter((page) => {
  try {
    return read(page).length > 0;
  } catch {
    return false;
  }
});
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Routes of other listeners than the app: the Prometheus metrics server (`METRICS_PORT`). */
const OUTSIDE_THE_APP = ['GET /metrics'];

/** `METHOD /path` of every operation, with OpenAPI's `{name}` written as the docs write it, `:name`. */
let operations: Array<{ method: string; path: string }> = [];

beforeAll(async () => {
  const app = createApp(createCore(memoryAdapters()), { logLevel: 'silent' });
  const document = (await (await app.request('/openapi.json')).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method.toLowerCase()]).map((method) => ({
      method,
      path: path.replace(/\{(\w+)\}/g, ':$1'),
    })),
  );
});

/** The first cell of each row of the Markdown table under `heading` (up to the next heading). */
function firstCells(page: string, heading: string): string[] {
  const text = read(page);
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${page} has no heading "${heading}"`);
  const section = text.slice(start + heading.length + 2).split(/\n#{1,6} /)[0]!;
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\|\s*-/.test(line))
    .slice(1)
    .map((line) => line.split(' | ')[0]!);
}

describe('docs/api.md', () => {
  it('"All routes in one table" lists every operation of the app, by method and path', () => {
    const cells = firstCells('docs/api.md', '## All routes in one table');
    const missing = operations.filter(({ method, path }) => {
      // A path ends where the cell's code span or its query string does.
      const rows = cells.filter((cell) =>
        new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\?|\`)`).test(cell),
      );
      return !rows.some((cell) => cell.includes(method));
    });
    expect(missing).toEqual([]);
  });
});

describe('METHOD /path in the documentation', () => {
  it.each(pages)('every one %s names is a route of the app', (page) => {
    const routes = operations.map(({ method, path }) => ({
      method,
      pattern: new RegExp(`^${path.replace(/:\w+/g, '[^/]+')}$`),
    }));
    const named = [...read(page).matchAll(/\b(GET|POST|PUT|PATCH|DELETE) (\/[\w/:{}.$-]*)/g)].map((match) => ({
      method: match[1]!,
      path: match[2]!,
    }));
    const unknown = named.filter(
      ({ method, path }) =>
        !OUTSIDE_THE_APP.includes(`${method} ${path}`) &&
        !routes.some((route) => route.method === method && route.pattern.test(path)),
    );
    expect(unknown.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });
});

describe('event types', () => {
  it.each([
    ['docs/events-and-webhooks.md', '## Event types'],
    ['docs/webhooks.md', '## Receiving webhooks'],
  ])("the table of %s lists exactly core's EVENT_TYPES", (page, heading) => {
    const types = firstCells(page, heading)
      .map((cell) => /^\| `([\w.]+)`$/.exec(cell)?.[1])
      .filter((type) => type !== undefined);
    expect(types.sort()).toEqual([...EVENT_TYPES].sort());
  });
});
