/**
 * @module Several instances: two `parley serve` processes sharing one Redis (a fresh key prefix)
 * or one PostgreSQL database (a fresh schema) are interchangeable — what one writes the other
 * reads, API_KEYS provisioned by both at once is stored once, and a Free workspace's quota is
 * exact across both.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  runCli,
  startServerProcess,
  startServerProcesses,
  type ServerProcess,
} from '../test-support/server-process.js';
import { sharedBackends } from '../test-support/shared-backends.js';

const KEYS = { pro: 'instances-pro-key-000001', free: 'instances-free-key-00001' };
const API_KEYS = JSON.stringify([
  { key: KEYS.pro, workspace: 'acme', plan: 'pro' },
  { key: KEYS.free, workspace: 'freeco', plan: 'free' },
]);

for (const backend of await sharedBackends())
  backend.describe(`two parley serve instances sharing ${backend.name}`, () => {
    let env: Record<string, string>;
    let instances: ServerProcess[] = [];

    beforeAll(async () => {
      env = { ...(await backend.fresh('instances')), API_KEYS };
      // Started together: both provision API_KEYS at the same moment.
      instances = await startServerProcesses([env, env]);
    });
    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
      await backend.cleanup();
    });

    const call = async (instance: ServerProcess, method: string, path: string, body?: unknown, key = KEYS.pro) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      const response = await fetch(`${instance.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as any };
    };

    it('both provisioned API_KEYS at once, and each key is stored once', async () => {
      const listed = await runCli(['keys', 'list'], env);
      expect(listed.code).toBe(0);
      expect(
        listed.stdout
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((row) => row.split(/\s+/)[1]),
      ).toEqual(['acme', 'freeco']);
    });

    it('what one instance writes, the other reads', async () => {
      const [a, b] = instances as [ServerProcess, ServerProcess];
      const agent = await call(a, 'POST', '/api/agents', {
        name: 'Shared',
        description: 'Written through A',
        model: 'modelA-4',
      });
      expect(agent.status).toBe(201);
      expect(await call(b, 'GET', `/api/agents/${agent.body.id}`)).toMatchObject({ status: 200, body: agent.body });

      const conversation = await call(b, 'POST', '/api/conversations', { agentId: agent.body.id, userId: 'u1' });
      expect(conversation.status).toBe(201);
      const messages = `/api/conversations/${conversation.body.id}/messages`;
      expect((await call(a, 'POST', messages, { role: 'user', content: 'via A' })).status).toBe(201);
      expect((await call(b, 'POST', messages, { role: 'assistant', content: 'via B' })).status).toBe(201);
      for (const instance of [a, b]) {
        const history = await call(instance, 'GET', messages);
        expect(history.body.messages.map((message: { content: string }) => message.content)).toEqual([
          'via A',
          'via B',
        ]);
      }
      expect(
        (await call(a, 'PATCH', `/api/conversations/${conversation.body.id}`, { status: 'completed' })).status,
      ).toBe(200);
      expect((await call(b, 'POST', messages, { role: 'user', content: 'too late' })).status).toBe(409);
    });

    it('130 concurrent requests of a Free workspace spread over both admit exactly 100 (30 × 429)', async () => {
      const responses = await Promise.all(
        Array.from({ length: 130 }, (_, index) =>
          fetch(`${instances[index % 2]!.base}/api/agents`, { headers: { Authorization: `Bearer ${KEYS.free}` } }),
        ),
      );
      await Promise.all(responses.map((response) => response.arrayBuffer()));
      const statuses = responses.map((response) => response.status);
      expect([
        statuses.filter((status) => status === 200).length,
        statuses.filter((status) => status === 429).length,
      ]).toEqual([100, 30]);
      // Each instance admitted some: the quota really was shared, not split.
      for (const parity of [0, 1])
        expect(statuses.filter((status, index) => index % 2 === parity && status === 200).length).toBeGreaterThan(0);
      const remaining = responses
        .filter((response) => response.status === 200)
        .map((response) => Number(/;r=(\d+);/.exec(response.headers.get('ratelimit')!)![1]))
        .sort((x, y) => x - y);
      expect(remaining).toEqual(Array.from({ length: 100 }, (_, index) => index));
    });

    it(`SIGTERM: each drains, closes ${backend.name} and exits 0; the data outlives them`, async () => {
      for (const instance of instances) {
        expect(await instance.stop('SIGTERM')).toBe(0);
        expect(instance.stderr()).toBe('');
      }
      const restarted = await startServerProcess(env);
      instances.push(restarted);
      expect(restarted.output()).toContain('(0 new, 0 updated, 2 unchanged)');
      const agents = await call(restarted, 'GET', '/api/agents');
      expect(agents.body.agents.map((agent: { name: string }) => agent.name)).toEqual(['Shared']);
    });
  });
