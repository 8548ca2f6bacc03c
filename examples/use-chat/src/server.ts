/**
 * @module The page's server: the built `useChat` page, a session route that starts a conversation,
 * and Parley's two chat routes forwarded with the API key, which never reaches the browser.
 */
import type { Core } from '@parley/core';
import { createApp } from '@parley/http';
import { Hono } from 'hono';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

/** Options of {@link createChatServer}. */
export interface ChatServerOptions {
  /** The core Parley's app runs on. */
  core: Core;
  /** A key of the workspace with `conversations:read` and `conversations:write`. */
  key: string;
  /** The agent every session talks to. */
  agentId: string;
  /** The built page (`vite build`'s `dist/`). */
  pageDir: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * `POST /session` starts a conversation with the agent and answers `{conversationId}`;
 * `POST /api/chat` and `GET /api/chat/:id/stream` go to Parley with `Authorization: Bearer <key>`,
 * unchanged otherwise; anything else is a file of the page. A real application checks here that
 * the signed-in user owns the conversation the request names.
 */
export function createChatServer(options: ChatServerOptions): Hono {
  const parley = createApp(options.core, { logLevel: 'warn' });
  const forward = async (request: Request) => {
    const headers = new Headers(request.headers);
    headers.set('Authorization', `Bearer ${options.key}`);
    const body = request.method === 'POST' ? await request.text() : undefined;
    return parley.fetch(new Request(request.url, { method: request.method, headers, body }));
  };
  return new Hono()
    .post('/session', async (c) => {
      const started = await parley.request('/api/conversations', {
        method: 'POST',
        headers: { Authorization: `Bearer ${options.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agentId: options.agentId }),
      });
      if (started.status !== 201) return c.json({ error: 'no conversation' }, 502);
      const { id } = (await started.json()) as { id: string };
      return c.json({ conversationId: id });
    })
    .post('/api/chat', (c) => forward(c.req.raw))
    .get('/api/chat/:id/stream', (c) => forward(c.req.raw))
    .get('*', async (c) => {
      const path = normalize(c.req.path === '/' ? '/index.html' : c.req.path);
      const type = TYPES[extname(path)];
      if (!type || path.includes('..')) return c.notFound();
      try {
        return c.body(await readFile(join(options.pageDir, path)), 200, { 'Content-Type': type });
      } catch {
        return c.notFound();
      }
    });
}
