/** @module Tests of serve(): listening, writes at the end of the turn, draining close, listen errors. */
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { serve } from './serve.js';

describe('serve', () => {
  it('listens on a free port and answers with the app', async () => {
    const handle = await serve(
      new Hono().get('/', (c) => c.text('hi')),
      { port: 0 },
    );
    try {
      expect(handle.url).toBe(`http://127.0.0.1:${handle.port}`);
      const response = await fetch(handle.url);
      expect(await response.text()).toBe('hi');
    } finally {
      await handle.close();
    }
  });

  it('writes a response at the end of the turn it became ready in, after the callbacks queued before it', async () => {
    // The handler queues a callback for the end of this turn, then answers: that callback runs
    // before the response is written, where it used to run after.
    const writtenBeforeTurnEnd: boolean[] = [];
    const app = new Hono<{ Bindings: HttpBindings }>().get('/', async (c) => {
      await null;
      const { outgoing } = c.env;
      setImmediate(() => writtenBeforeTurnEnd.push(outgoing.headersSent));
      return c.text('hi');
    });
    const handle = await serve(app, { port: 0 });
    try {
      expect(await (await fetch(handle.url)).text()).toBe('hi');
      expect(writtenBeforeTurnEnd).toEqual([false]);
    } finally {
      await handle.close();
    }
  });

  it('answers every one of many concurrent requests with its own response', async () => {
    const app = new Hono().get('/:n', async (c) => {
      await new Promise((resolve) => setImmediate(resolve));
      return c.text(c.req.param('n'));
    });
    const handle = await serve(app, { port: 0 });
    try {
      const numbers = Array.from({ length: 200 }, (_, n) => String(n));
      const bodies = await Promise.all(numbers.map(async (n) => (await fetch(`${handle.url}/${n}`)).text()));
      expect(bodies).toEqual(numbers);
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
