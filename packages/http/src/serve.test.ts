/** @module Tests of serve(): listening, draining close, listen errors. */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { serve } from './serve.js';

describe('serve', () => {
  it('listens on a free port and answers with the app', async () => {
    const handle = await serve(new Hono().get('/', (c) => c.text('hi')), { port: 0 });
    try {
      expect(handle.url).toBe(`http://127.0.0.1:${handle.port}`);
      const response = await fetch(handle.url);
      expect(await response.text()).toBe('hi');
    } finally {
      await handle.close();
    }
  });

  it('close() lets an in-flight request finish, then refuses new connections', async () => {
    let release!: () => void;
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const app = new Hono().get('/slow', async (c) => {
      markStarted();
      await new Promise<void>((resolve) => (release = resolve));
      return c.text('done');
    });
    const handle = await serve(app, { port: 0 });
    const inFlight = fetch(`${handle.url}/slow`);
    await started;
    const closed = handle.close();
    release();
    expect(await (await inFlight).text()).toBe('done');
    const before = Date.now();
    await closed;
    expect(Date.now() - before).toBeLessThan(1_000);
    await expect(fetch(`${handle.url}/slow`)).rejects.toThrow();
  });

  it('rejects when the port is taken', async () => {
    const first = await serve(new Hono(), { port: 0 });
    try {
      await expect(serve(new Hono(), { port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
  });
});
