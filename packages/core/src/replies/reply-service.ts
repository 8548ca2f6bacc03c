/** @module Agent replies (README "Agents that reply"): who gets one, asking for one, and making it. */
import { randomUUID } from 'node:crypto';
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { FeedSignal } from '../ports/conversation-feed.js';
import type { IdGenerator } from '../ports/ids.js';
import type { LanguageModel, ModelRequest, FinishReason, TokenUsage } from '../ports/language-model.js';
import type { ReplyJob, ReplyQueue } from '../ports/reply-queue.js';
import type { OutboxBatch, Storage } from '../ports/storage.js';
import { MessageWriter } from '../services/message-writer.js';
import { TOKENS } from '../tokens.js';
import { AGENT_MODELS, type Agent, type Conversation, type Message } from '../types.js';

/** Settings of replies (`createCore` `replyContextMessages`, `replyRetryDelaysMs`). */
export interface ReplyOptions {
  /** How many of the conversation's latest messages a reply is generated from (default 50). */
  contextMessages: number;
  /** Waits between the 3 tries of a failing provider, in ms (default `[1000, 4000]`). */
  retryDelaysMs: readonly number[];
}

/** Where replies report (a {@link WorkerLogger} fits). Entries carry ids, model names and error kinds, never content. */
export interface ReplyLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * What happened to one reply request: `deferred` means this process has no language model for
 * the agent's `model`, so it leaves the request to a worker that has one (docs/replies-and-streams.md).
 */
export const REPLY_OUTCOMES = ['stored', 'failed', 'skipped', 'aborted', 'deferred'] as const;
/** One of {@link REPLY_OUTCOMES}. */
export type ReplyOutcome = (typeof REPLY_OUTCOMES)[number];

/** The answer to `POST /api/conversations/:id/reply`: the request was queued. */
export interface ReplyRequested {
  conversationId: string;
  /** The message the reply will answer: the conversation's latest when asked; `null` if it had none. */
  inReplyTo: string | null;
}

/** The most characters a message may hold (docs/api.md#resources); a longer reply is cut there. */
const MAX_CONTENT = 100_000;
/** Tries of a failing provider (docs/replies-and-streams.md). */
const TRIES = 3;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });

/**
 * An error as a log line or a `reply.failed` may show it: its kind and HTTP status, never its
 * message (a provider's message may quote the prompt).
 */
export function describeModelError(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? `${name} (HTTP ${status})` : name;
}

/**
 * Agent replies. An agent replies when it is `active`, its `model` names a configured language
 * model and its `configuration.autoReply` is not `false` (automatic replies) — or when asked
 * through {@link ReplyService.request}. Requests wait in the {@link ReplyQueue} (one conversation
 * at a time, in order) and are made by a reply worker calling {@link ReplyService.generate}.
 */
@injectable()
export class ReplyService {
  constructor(
    @inject(TOKENS.storage) private readonly storage: Storage,
    @inject(TOKENS.replyQueue) private readonly queue: ReplyQueue,
    @inject(MessageWriter) private readonly writer: MessageWriter,
    @inject(TOKENS.models) private readonly models: ReadonlyMap<string, LanguageModel>,
    @inject(TOKENS.clock) private readonly clock: Clock,
    @inject(TOKENS.ids) private readonly ids: IdGenerator,
    @inject(TOKENS.replyOptions) private readonly options: ReplyOptions,
  ) {}

  /** True when `agent` would reply on its own to a user message (not counting the conversation's status). */
  repliesAutomatically(agent: Agent): boolean {
    return agent.status === 'active' && this.models.has(agent.model) && agent.configuration.autoReply !== false;
  }

  /**
   * True when a reply of `agent` to a user message is to be queued, whichever process relays the
   * message: its model is configured here, or it is a name outside the spec's three — which an
   * agent can only have been given by a process that had it configured. Such a request waits for a
   * worker with that model (a relay in a worker without `MODELS` must not drop it).
   */
  private repliesSomewhere(agent: Agent): boolean {
    const configuredSomewhere = this.models.has(agent.model) || !(AGENT_MODELS as readonly string[]).includes(agent.model);
    return agent.status === 'active' && configuredSomewhere && agent.configuration.autoReply !== false;
  }

  /**
   * Gives a request up that no worker could make (`deferred` for longer than the give-up time):
   * `reply.failed` goes to the conversation's streams, and the reason to the log.
   */
  async giveUp(job: ReplyJob, error: string, logger?: ReplyLogger): Promise<void> {
    logger?.warn({ workspaceId: job.workspaceId, conversationId: job.conversationId, inReplyTo: job.inReplyTo, error }, 'reply given up');
    await this.publish(job.workspaceId, job.conversationId, { type: 'reply.failed', inReplyTo: job.inReplyTo, error });
  }

  /**
   * Queues a reply of the conversation's agent to its latest message (`POST
   * /api/conversations/:id/reply`), also for an agent whose `autoReply` is off.
   * @throws ParleyError `not_found` (no such conversation); `conflict` when the conversation is
   *   completed, its agent is inactive or the agent's model has no configured language model
   */
  async request(workspaceId: string, conversationId: string): Promise<ReplyRequested> {
    const conversation = await this.storage.conversations.get(workspaceId, conversationId);
    if (!conversation) throw ParleyError.notFound('conversation', conversationId);
    if (conversation.status === 'completed') throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed and gets no replies.`);
    const agent = await this.storage.agents.get(workspaceId, conversation.agentId);
    if (!agent || agent.status !== 'active') throw new ParleyError(ErrorCode.conflict, `The agent of conversation '${conversationId}' is inactive.`);
    if (!this.models.has(agent.model)) {
      throw new ParleyError(ErrorCode.conflict, `No language model is configured for the agent's model '${agent.model}'.`, { model: agent.model });
    }
    const latest = await this.storage.messages.page(workspaceId, conversationId, { limit: 1 });
    const inReplyTo = latest?.messages.at(-1)?.id ?? null;
    await this.queue.enqueue(this.job(workspaceId, conversationId, inReplyTo));
    return { conversationId, inReplyTo };
  }

  /**
   * Queues the automatic replies a batch of recorded events calls for: one per `message.sent` of a
   * `user` message whose conversation is active and whose agent replies automatically, with a model
   * configured here or, as its name says, in another process (see `repliesSomewhere`). Run by the
   * outbox relay before it acknowledges the batch, so a request is never lost (at-least-once: a
   * batch handed out twice queues twice, and {@link generate} answers a message once).
   * Resolves with the number of requests queued.
   */
  async queueAutomaticReplies(batch: OutboxBatch): Promise<number> {
    const conversations = new Map<string, Promise<Conversation | null>>();
    const agents = new Map<string, Promise<Agent | null>>();
    const jobs: ReplyJob[] = [];
    for (const event of batch.events) {
      if (event.type !== 'message.sent') continue;
      const message = event.data as Message;
      if (message.role !== 'user') continue;
      let conversation = conversations.get(message.conversationId);
      if (!conversation) conversations.set(message.conversationId, (conversation = this.storage.conversations.get(batch.workspaceId, message.conversationId)));
      const found = await conversation;
      if (!found || found.status !== 'active') continue;
      let agent = agents.get(found.agentId);
      if (!agent) agents.set(found.agentId, (agent = this.storage.agents.get(batch.workspaceId, found.agentId)));
      const owner = await agent;
      if (owner && this.repliesSomewhere(owner)) jobs.push(this.job(batch.workspaceId, found.id, message.id));
    }
    for (const job of jobs) await this.queue.enqueue(job);
    return jobs.length;
  }

  /**
   * Makes one reply: reads the agent and the latest `contextMessages` messages, streams the model's
   * deltas to the conversation's feed, and stores the text as an `assistant` message with
   * `metadata.reply: {inReplyTo, model, finishReason, usage}` (recording `message.received`).
   * A failing provider is tried 3 times with backoff; then nothing is stored, `reply.failed` goes
   * to the feed and a log line (without content) says why. Skipped, storing nothing: a conversation
   * gone or completed (also when it completes during generation: storage refuses the append), an
   * agent inactive, a message already answered (a request handed out twice). Deferred, storing
   * nothing: the agent's model is not configured in this process (a worker that has it makes the
   * reply). `signal` aborts (lease lost, worker stopping): nothing is stored.
   */
  async generate(job: ReplyJob, signal: AbortSignal, logger?: ReplyLogger): Promise<ReplyOutcome> {
    const { workspaceId, conversationId, inReplyTo } = job;
    const conversation = await this.storage.conversations.get(workspaceId, conversationId);
    if (!conversation || conversation.status !== 'active') return 'skipped';
    const agent = await this.storage.agents.get(workspaceId, conversation.agentId);
    if (!agent || agent.status !== 'active') return 'skipped';
    const model = this.models.get(agent.model);
    // Another worker may have it: only a worker that can make a reply acknowledges its request.
    if (!model) return 'deferred';
    const page = await this.storage.messages.page(workspaceId, conversationId, { limit: this.options.contextMessages });
    const context = page?.messages ?? [];
    if (inReplyTo !== null && context.some((message) => (message.metadata.reply as { inReplyTo?: unknown } | undefined)?.inReplyTo === inReplyTo)) return 'skipped';
    const request: ModelRequest = {
      ...(agent.systemPrompt !== null && { system: agent.systemPrompt }),
      messages: context.map((message) => ({ role: message.role, content: message.content })),
      ...(agent.temperature !== null && { temperature: agent.temperature }),
      ...(agent.maxTokens !== null && { maxTokens: agent.maxTokens }),
      signal,
    };
    const fields = { workspaceId, conversationId, inReplyTo, model: agent.model };
    let lastError: unknown;
    for (let attempt = 1; attempt <= TRIES; attempt += 1) {
      if (signal.aborted) return 'aborted';
      try {
        const result = await this.stream(model, request, job, attempt);
        return await this.store(job, agent, result, logger);
      } catch (error) {
        if (signal.aborted) return 'aborted';
        lastError = error;
        logger?.warn({ ...fields, attempt, error: describeModelError(error) }, 'language model failed');
        if (attempt < TRIES) await sleep(this.options.retryDelaysMs[attempt - 1] ?? this.options.retryDelaysMs.at(-1) ?? 0, signal);
      }
    }
    const error = `The language model failed ${TRIES} times (${describeModelError(lastError)}); the reply was given up.`;
    logger?.warn({ ...fields, attempts: TRIES, error: describeModelError(lastError) }, 'reply given up');
    await this.publish(workspaceId, conversationId, { type: 'reply.failed', inReplyTo, error });
    return 'failed';
  }

  private async stream(model: LanguageModel, request: ModelRequest, job: ReplyJob, attempt: number) {
    let text = '';
    for await (const part of model.stream(request)) {
      if (part.type === 'text-delta') {
        text += part.delta;
        await this.publish(job.workspaceId, job.conversationId, { type: 'message.delta', inReplyTo: job.inReplyTo, delta: part.delta, attempt });
      } else {
        if (text.trim() === '') throw new EmptyReplyError();
        return { text, finishReason: part.finishReason, usage: part.usage };
      }
    }
    throw new EmptyReplyError();
  }

  private async store(job: ReplyJob, agent: Agent, result: { text: string; finishReason: FinishReason; usage: TokenUsage }, logger?: ReplyLogger): Promise<ReplyOutcome> {
    const cut = result.text.length > MAX_CONTENT;
    const message: Message = {
      id: this.ids.next('msg'),
      conversationId: job.conversationId,
      content: cut ? result.text.slice(0, MAX_CONTENT) : result.text,
      role: 'assistant',
      metadata: {
        reply: { inReplyTo: job.inReplyTo, model: agent.model, finishReason: cut ? 'length' : result.finishReason, usage: result.usage },
      },
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    if ((await this.writer.append(job.workspaceId, message)) !== 'appended') return 'skipped';
    logger?.info({ workspaceId: job.workspaceId, conversationId: job.conversationId, messageId: message.id, inReplyTo: job.inReplyTo, model: agent.model, finishReason: result.finishReason, usage: result.usage }, 'reply stored');
    return 'stored';
  }

  /** Live signals are best effort: a feed outage never fails a reply (streams re-read storage). */
  private publish(workspaceId: string, conversationId: string, signal: FeedSignal): Promise<void> {
    return this.writer.signal(workspaceId, conversationId, signal);
  }

  private job(workspaceId: string, conversationId: string, inReplyTo: string | null): ReplyJob {
    return { id: `rpl_${randomUUID()}`, workspaceId, conversationId, inReplyTo, requestedAt: this.clock.now() };
  }
}

/** A model that finished without any text: counted as a failed try (a message needs content). */
class EmptyReplyError extends Error {
  override readonly name = 'EmptyReplyError';
  constructor() {
    super('The language model returned no text.');
  }
}
