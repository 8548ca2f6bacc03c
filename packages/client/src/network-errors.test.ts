/** @module The client when no answer arrives: a closed port is a typed `ParleyNetworkError`, not `TypeError: fetch failed`. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createParleyClient, isParleyApiError, isParleyNetworkError, ParleyNetworkError } from './index.js';

/** A loopback port nothing listens on: bound by the OS, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('network failures', () => {
  it("rejects with ParleyNetworkError naming the request and ECONNREFUSED, keeping fetch's error as cause", async () => {
    const port = await closedPort();
    const parley = createParleyClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'prl_unused_key_0123456789' });
    const error = await parley.agents.get('agt_1').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ParleyNetworkError);
    expect(isParleyNetworkError(error)).toBe(true);
    expect(isParleyApiError(error)).toBe(false);
    const network = error as ParleyNetworkError;
    expect(network).toMatchObject({
      name: 'ParleyNetworkError',
      code: 'network_error',
      method: 'GET',
      url: `http://127.0.0.1:${port}/api/agents/agt_1`,
      causeCode: 'ECONNREFUSED',
    });
    expect(network.message).toBe(
      `Could not reach Parley: GET http://127.0.0.1:${port}/api/agents/agt_1 failed (connect ECONNREFUSED 127.0.0.1:${port}).`,
    );
    expect(network.message).not.toContain('prl_unused');
    expect(network.cause).toBeInstanceOf(TypeError);
  });

  it('wraps raw calls and iterators too', async () => {
    const port = await closedPort();
    const parley = createParleyClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'prl_unused_key_0123456789' });
    await expect(parley.raw.GET('/healthz')).rejects.toBeInstanceOf(ParleyNetworkError);
    await expect(parley.messages.iterate('conv_1').next()).rejects.toBeInstanceOf(ParleyNetworkError);
  });

  it('lets an abort the caller asked for through unchanged', async () => {
    const port = await closedPort();
    const parley = createParleyClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'prl_unused_key_0123456789' });
    const aborted = parley.raw.GET('/healthz', { signal: AbortSignal.abort() });
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await expect(parley.raw.GET('/healthz', { signal: AbortSignal.abort() })).rejects.not.toBeInstanceOf(
      ParleyNetworkError,
    );
  });
});
