/** @module `createCore`: settings, replacing a service (`register`) and replacing a port (the bundle). */
import { memoryAdapters } from '@parley/adapter-memory';
import { describe, expect, it } from 'vitest';
import { inject, injectable, type DependencyContainer } from './di.js';
import {
  AgentService,
  TOKENS,
  createCore,
  type Adapters,
  type Agent,
  type AgentCreateInput,
  type AgentSchemas,
  type Clock,
  type IdGenerator,
  type ReplyOutcome,
  type WebhookTargetPolicy,
  type WorkspaceScope,
} from './index.js';
import { isParleyError } from './errors.js';
import type { Storage } from './ports/storage.js';
import { ManualClock } from './testing/clock.js';
import { startReceiver } from './testing/receiver.js';
import { scriptedModel } from './testing/scripted-model.js';

const WS: WorkspaceScope = { workspaceId: 'ws' };
const INPUT: AgentCreateInput = { name: 'Ada', description: 'Billing', model: 'modelA-4' };

/**
 * A service a host might register instead of Parley's: every new agent gets a default system
 * prompt. tsyringe does not inherit a base class's `@inject` tokens, so the subclass names them.
 */
@injectable()
class HouseStyleAgentService extends AgentService {
  constructor(
    @inject(TOKENS.storage) storage: Storage,
    @inject(TOKENS.clock) clock: Clock,
    @inject(TOKENS.ids) ids: IdGenerator,
    @inject(TOKENS.agentSchemas) schemas: AgentSchemas,
    @inject(TOKENS.webhookTargets) targets: WebhookTargetPolicy,
  ) {
    super(storage, clock, ids, schemas, targets);
  }

  override async create(scope: WorkspaceScope, input: AgentCreateInput): Promise<Agent> {
    return super.create(scope, { systemPrompt: 'Answer in one sentence.', ...input });
  }
}

describe('createCore(adapters, settings)', () => {
  it('takes its clock from the settings: every service, core.clock and the default id generator use it', async () => {
    const clock = new ManualClock(Date.parse('2030-05-06T07:08:09.010Z'));
    const core = createCore(memoryAdapters(), { clock });
    expect(core.clock).toBe(clock);
    const agent = await core.agents.create({ workspaceId: 'ws' }, INPUT);
    expect(agent.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // A ULID's first 10 characters are its millisecond timestamp (Crockford base32).
    expect(agent.id.slice('agt_'.length, 'agt_'.length + 10)).toBe(ulidTime(clock.now()));
    const conversation = await core.conversations.create({ workspaceId: 'ws' }, { agentId: agent.id });
    expect(conversation.createdAt).toBe('2030-05-06T07:08:09.010Z');
    // Each core has its own container: another core keeps the system clock.
    expect((await createCore(memoryAdapters()).agents.create({ workspaceId: 'ws' }, INPUT)).createdAt).not.toBe(
      agent.createdAt,
    );
  });

  it('a clock registered through `register` reaches ids, services, core.clock and every worker', async () => {
    const clock = new ManualClock(Date.parse('2030-05-06T07:08:09.010Z'));
    const receiver = await startReceiver();
    const core = createCore(memoryAdapters(), {
      allowPrivateWebhookUrls: true,
      workers: { relay: { pollMs: 10 }, delivery: { pollMs: 10 } },
      register: (container) => container.registerInstance(TOKENS.clock, clock),
    });
    try {
      expect(core.clock).toBe(clock);
      const hook = await core.webhooks.create(WS, { url: receiver.url, events: ['agent.created'] });
      const agent = await core.agents.create(WS, INPUT);
      expect(agent.createdAt).toBe('2030-05-06T07:08:09.010Z');
      expect(agent.id.slice('agt_'.length, 'agt_'.length + 10)).toBe(ulidTime(clock.now()));
      core.workers.start();
      await receiver.waitFor(1);
      // The delivery worker signs with, and logs the attempt at, the registered clock's time.
      expect(receiver.received[0]!.timestamp).toBe(String(Math.floor(clock.now() / 1000)));
      let logged = await core.deliveries.list(WS, hook.id);
      for (let i = 0; i < 300 && logged.deliveries.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        logged = await core.deliveries.list(WS, hook.id);
      }
      expect(logged.deliveries[0]!.createdAt).toBe('2030-05-06T07:08:09.010Z');
    } finally {
      await core.workers.stop();
      await receiver.close();
    }
  });

  it('the reply worker ages requests by the registered clock: given up after replyGiveUpMs', async () => {
    const adapters = memoryAdapters();
    // The agent's model is configured in another process only: this core's worker can only give up.
    const other = createCore(adapters, { models: { tiny: scriptedModel([{ deltas: ['never'] }]) } });
    const agent = await other.agents.create(WS, { ...INPUT, model: 'tiny' });
    const conversation = await other.conversations.create(WS, { agentId: agent.id });
    await other.conversations.sendMessage(WS, conversation.id, { role: 'user', content: 'Hi' });
    const clock = new ManualClock(Date.parse('2030-05-06T07:08:09.010Z'));
    const outcomes: ReplyOutcome[] = [];
    const core = createCore(adapters, {
      replyGiveUpMs: 60_000,
      workers: { replies: { pollMs: 10 }, onReplyOutcome: (outcome) => outcomes.push(outcome) },
      register: (container) => container.registerInstance(TOKENS.clock, clock),
    });
    // What this core's relay does with the message's event: asks for the reply, stamped by the registered clock.
    expect(await core.replies.queueAutomaticReplies((await adapters.storage.outbox.take(100, 0))!)).toBe(1);
    core.workers.replies.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(outcomes).toEqual([]);
      clock.advance(60_001);
      for (let i = 0; i < 300 && outcomes.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(outcomes).toEqual(['failed']);
    } finally {
      await core.workers.stop();
    }
  });

  it("replaces a service: `register` installs the subclass, built from the core's ports, and it is what core.agents is", async () => {
    // docs/architecture.md "Replacing a service" copies this call.
    const core = createCore(memoryAdapters(), {
      models: { house: scriptedModel([{ deltas: ['Hello.'] }]) },
      register: (container) => container.registerSingleton(AgentService, HouseStyleAgentService),
    });
    expect(core.agents).toBeInstanceOf(HouseStyleAgentService);
    const agent = await core.agents.create({ workspaceId: 'ws' }, INPUT);
    expect((await core.agents.get({ workspaceId: 'ws' }, agent.id)).systemPrompt).toBe('Answer in one sentence.');
    // The conversation service reads the same storage the replacement wrote to.
    expect((await core.conversations.create({ workspaceId: 'ws' }, { agentId: agent.id })).agentId).toBe(agent.id);
    // The replacement keeps the core's protections: the configured model names, the SSRF checks.
    expect((await core.agents.create(WS, { ...INPUT, model: 'house' })).model).toBe('house');
    const metadata = { name: 'lookup', description: 'Instance metadata', parameters: { type: 'object' } };
    const tool = { ...metadata, kind: 'webhook', url: 'http://169.254.169.254/latest/meta-data/' } as const;
    const refused = await core.agents.create(WS, { ...INPUT, tools: [tool] }).catch((error: unknown) => error);
    expect(isParleyError(refused) && refused.code).toBe('validation_failed');
    expect((await core.agents.list(WS)).total).toBe(2);
  });

  it('a replacement that does not pass the protections on fails at createCore, never accepting any tool URL', () => {
    // The shape docs/architecture.md used to show: TypeScript refuses it now, and so does createCore.
    @injectable()
    class WithoutProtections extends AgentService {
      constructor(
        @inject(TOKENS.storage) storage: Storage,
        @inject(TOKENS.clock) clock: Clock,
        @inject(TOKENS.ids) ids: IdGenerator,
      ) {
        // @ts-expect-error the agent schemas and the webhook target policy are required
        super(storage, clock, ids);
      }
    }
    // tsyringe gives a subclass without its own constructor no arguments at all.
    @injectable()
    class WithoutConstructor extends AgentService {}
    for (const replacement of [WithoutProtections, WithoutConstructor]) {
      const register = (container: Pick<DependencyContainer, 'registerSingleton'>) => {
        container.registerSingleton(AgentService, replacement);
      };
      expect(() => createCore(memoryAdapters(), { register })).toThrow(/AgentService: expected its agent schemas/);
    }
  });

  it('replaces a port by replacing a member of the bundle: the services and workers use the replacement', async () => {
    const memory = memoryAdapters();
    const keys: string[] = [];
    const counted: Adapters = {
      ...memory,
      rateLimits: { hit: (key, rule, now) => (keys.push(key), memory.rateLimits.hit(key, rule, now)) },
    };
    const core = createCore(counted);
    const { record } = await core.apiKeys.issue({ workspaceId: 'ws', plan: 'free' });
    expect(
      (await core.rateLimiter.check({ keyId: record.keyId, workspaceId: 'ws', plan: 'free', scopes: ['*'] })).allowed,
    ).toBe(true);
    expect(keys).toHaveLength(1);
  });
});

/** The 10-character Crockford base32 time part of a ULID for `ms`. */
function ulidTime(ms: number): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let out = '';
  for (let i = 0; i < 10; i += 1) {
    out = alphabet[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}
