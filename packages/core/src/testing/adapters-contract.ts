/**
 * @module `runAdaptersContract`: the contract of the `Adapters` bundle itself (`info`, `ready`,
 * `onReconnect`, `close`), run by every adapter package on the bundle its factory returns.
 */
import type { Adapters } from '../ports/adapters.js';
import type { FeedSignal } from '../ports/conversation-feed.js';
import { contractGroup, type ContractTestApi, type OpenedFixture } from './contract.js';

/** A bundle under test and what the contract needs to exercise it. */
export interface AdaptersFixture {
  adapters: Adapters;
  /** Secrets the bundle was configured with (a password in a URL): `info.description` names none. */
  secrets?: readonly string[];
  /** Closes what the test opened besides the bundle (the bundle itself is closed by the contract). */
  cleanup?: () => void | Promise<void>;
}

/** Returns a fresh bundle over a reachable backend, or an {@link AdaptersFixture}. */
export type AdaptersFactory = () => Adapters | AdaptersFixture | Promise<Adapters | AdaptersFixture>;

/**
 * What a backend can be put through besides being reachable. A group whose option is left out is
 * not registered at all (memory can neither lose its connection nor be unreachable), so a run that
 * counts skipped tests as failures stays green. `skip` names opted-out tests (`'adapters: <title>'`).
 */
export interface AdaptersContractOptions {
  /**
   * Drops the connections of `adapters` to its backend once while the backend stays up (Redis
   * `CLIENT KILL`, PostgreSQL `pg_terminate_backend`): group `'adapters reconnect'`.
   */
  dropConnection?: (adapters: Adapters) => Promise<void>;
  /** A bundle pointed at a backend that does not answer (a closed port): group `'adapters unreachable'`. */
  unreachable?: () => Adapters;
  skip?: readonly string[];
}

/** Longest wait for something asynchronous the contract expects (a signal, a reconnect), in ms. */
const SETTLE_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean): Promise<void> {
  for (const end = Date.now() + SETTLE_MS; !done() && Date.now() < end;) await sleep(10);
}

/** Runs the bundle contract against `factory`. */
export function runAdaptersContract(
  t: ContractTestApi,
  factory: AdaptersFactory,
  options: AdaptersContractOptions = {},
): void {
  const skip = options.skip ?? [];
  const { dropConnection, unreachable } = options;
  const open = async (): Promise<OpenedFixture<AdaptersFixture>> => {
    const made = await factory();
    const fixture: AdaptersFixture = 'adapters' in made ? made : { adapters: made };
    return {
      subject: fixture,
      cleanup: async () => {
        await fixture.adapters.close();
        await fixture.cleanup?.();
      },
    };
  };

  t.describe('adapters bundle contract', () => {
    contractGroup(t, 'adapters', open, skip, (test) => {
      test('info names the backend in one line, without a secret', async ({ adapters, secrets = [] }) => {
        const { name, description, durable } = adapters.info;
        t.expect(typeof name === 'string' && name.length > 0).toBe(true);
        t.expect(typeof description === 'string' && description.length > 0 && !/[\r\n]/.test(description)).toBe(true);
        t.expect(typeof durable).toBe('boolean');
        for (const secret of secrets) t.expect(description.includes(secret)).toBe(false);
      });

      test('ready() resolves, again when called twice, and the members then work', async ({ adapters }) => {
        await adapters.ready();
        await adapters.ready(5_000);
        t.expect(await adapters.replyQueue.size()).toBe(0);
        const got: FeedSignal[] = [];
        const subscription = await adapters.conversationFeed.subscribe(
          { workspaceId: 'ws_bundle' },
          'conv_1',
          (signal) => got.push(signal),
        );
        await adapters.conversationFeed.publish({ workspaceId: 'ws_bundle' }, 'conv_1', {
          type: 'conversation.completed',
        });
        await until(() => got.length > 0);
        t.expect(got).toEqual([{ type: 'conversation.completed' }]);
        await subscription.unsubscribe();
      });

      test('onReconnect does not call its listener for the first connection', async ({ adapters }) => {
        let calls = 0;
        adapters.onReconnect(() => (calls += 1));
        await adapters.ready();
        await sleep(200);
        t.expect(calls).toBe(0);
      });

      test('close() ends a waiting reply lease at once, and a second close() resolves too', async ({ adapters }) => {
        await adapters.ready();
        const started = Date.now();
        const leasing = adapters.replyQueue.lease(SETTLE_MS, { models: ['contract-model'] });
        await sleep(50);
        await adapters.close();
        t.expect(await leasing).toBeNull();
        t.expect(Date.now() - started < SETTLE_MS / 2).toBe(true);
        await adapters.close();
      });
    });

    if (dropConnection) {
      contractGroup(t, 'adapters reconnect', open, skip, (test) => {
        test('onReconnect calls its listener once the lost connection is back', async ({ adapters }) => {
          let calls = 0;
          adapters.onReconnect(() => (calls += 1));
          await adapters.ready();
          // As on a server, something listens (a stream), so every connection the bundle keeps is open.
          const subscription = await adapters.conversationFeed.subscribe(
            { workspaceId: 'ws_bundle' },
            'conv_1',
            () => {},
          );
          await dropConnection(adapters);
          await until(() => calls > 0);
          t.expect(calls > 0).toBe(true);
          await adapters.ready();
          await subscription.unsubscribe();
        });
      });
    }

    if (!unreachable) return;
    const openUnreachable = async (): Promise<OpenedFixture<Adapters>> => {
      const adapters = unreachable();
      return { subject: adapters, cleanup: () => adapters.close() };
    };
    contractGroup(t, 'adapters unreachable', openUnreachable, skip, (test) => {
      test('ready(waitMs) rejects after about waitMs, naming the backend; close() still resolves', async (adapters) => {
        const started = Date.now();
        const error = await adapters.ready(300).then(
          () => null,
          (reason: unknown) => reason,
        );
        const waited = Date.now() - started;
        t.expect(error instanceof Error).toBe(true);
        t.expect((error as Error).message.includes(adapters.info.name)).toBe(true);
        t.expect(waited >= 200 && waited < 5_000).toBe(true);
        await adapters.close();
      });
    });
  });
}
