/**
 * @module Issue "Plan rate limits" done-when, against the real `parley serve` process: concurrent
 * bursts over TCP admit exactly the plan's quota, and other workspaces are unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../../test-support/server-process.js';

const KEYS = {
  free: 'free-workspace-key-0001',
  pro: 'pro-workspace-key-00001',
  other: 'other-workspace-key-001',
};

describe('plan rate limits (end to end)', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({
      API_KEYS: JSON.stringify([
        { key: KEYS.free, workspace: 'acme', plan: 'free' },
        { key: KEYS.pro, workspace: 'globex', plan: 'pro' },
        { key: KEYS.other, workspace: 'initech', plan: 'free' },
      ]),
    });
  });

  afterAll(() => server.stop('SIGKILL'));

  /** `count` concurrent GET /api/agents with `key`; the statuses and the 429s' headers. */
  async function burst(key: string, count: number) {
    const responses = await Promise.all(
      Array.from({ length: count }, () =>
        fetch(`${server.base}/api/agents`, { headers: { Authorization: `Bearer ${key}` } }),
      ),
    );
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    return responses;
  }

  it('a Free workspace: 130 concurrent requests → exactly 100 × 200 and 30 × 429 with the RateLimit fields', async () => {
    const responses = await burst(KEYS.free, 130);
    const ok = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status === 429);
    expect([ok.length, refused.length]).toEqual([100, 30]);

    for (const response of responses) expect(response.headers.get('ratelimit-policy')).toBe('"free";q=100;w=3600');
    // The admitted requests saw every remaining count from 99 down to 0 exactly once.
    const remaining = ok
      .map((response) => Number(/;r=(\d+);/.exec(response.headers.get('ratelimit')!)![1]))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, index) => index));
    for (const response of refused) {
      expect(response.headers.get('ratelimit')).toMatch(/^"free";r=0;t=(3599|3600)$/);
      expect(response.headers.get('retry-after')).toMatch(/^(35|36)$/);
    }
  });

  it('a Pro workspace: 1 030 concurrent requests → exactly 1 000 admitted (plus what refills while they run)', async () => {
    const started = performance.now();
    const responses = await burst(KEYS.pro, 1030);
    // Pro refills one request every 3.6 s. A burst that takes longer than that on a loaded
    // machine is legitimately admitted one more per interval; a quick one gets exactly 1 000.
    const refills = Math.floor((performance.now() - started) / 3_600);
    const admitted = responses.filter((response) => response.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1000);
    expect(admitted).toBeLessThanOrEqual(1000 + refills);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(1030 - admitted);
    expect(new Set(responses.map((response) => response.headers.get('ratelimit-policy')))).toEqual(
      new Set(['"pro";q=1000;w=3600']),
    );
  });

  it('another Free workspace is unaffected by both bursts', async () => {
    const [response] = await burst(KEYS.other, 1);
    expect(response!.status).toBe(200);
    expect(response!.headers.get('ratelimit')).toBe('"free";r=99;t=36');
  });
});
