/** @module Agent replies (README "Agents that reply"): who gets one, asking for one, and making it. */
import { randomUUID } from 'node:crypto';
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { FeedSignal } from '../ports/conversation-feed.js';
import type { IdGenerator } from '../ports/ids.js';
import type { LanguageModel, ModelRequest, FinishReason, TokenUsage } from '../ports/language-model.js';
import type { ReplyJob, ReplyQueue } from '../ports/reply-queue.js';
import type { OutboxBatch, Storage, UsageRecord } from '../ports/storage.js';
import { domainEvent } from '../services/domain-events.js';
import { MessageWriter } from '../services/message-writer.js';
import { TOKENS } from '../tokens.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import { agentMaxSteps, agentTools, ToolResultsSchema, type ToolResultsInput } from '../schemas/tools.js';
import { recordVersion } from '../record-version.js';
import { parse, validationFailed } from '../validation.js';
import { AGENT_MODELS, type Agent, type AgentRecord, type Conversation, type Message, type PendingToolCall, type ReplyFailed, type ReplyRequiresAction, type ToolCall } from '../types.js';
import { answeredResult, callWebhookTool, errorResult, promptMessages, toolAnswersOf, type PausedConversation, type StoredPendingToolCall } from './tool-calls.js';

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
 * What happened to one reply request: `paused` means it waits for tool results (docs/replies-and-streams.md#tools);
 * `deferred` means this process has no language model for the agent's `model`, so it leaves the
 * request to a worker that has one (docs/replies-and-streams.md).
 */
export const REPLY_OUTCOMES = ['stored', 'paused', 'failed', 'skipped', 'aborted', 'deferred'] as const;
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
    @inject(TOKENS.webhookTransport) private readonly transport: WebhookTransport,
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
   * `reply.failed` is recorded (event, webhooks) and goes to the conversation's streams, and the
   * reason to the log.
   */
  async giveUp(job: ReplyJob, error: string, logger?: ReplyLogger): Promise<void> {
    logger?.warn({ workspaceId: job.workspaceId, conversationId: job.conversationId, inReplyTo: job.inReplyTo, error }, 'reply given up');
    await this.recordFailure(job, error);
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
   * Answers calls a paused reply waits for (`POST /api/conversations/:id/tool-results`): a client
   * tool's `output`, or `approved` (with an optional `reason`) for a call that requires approval.
   * The answered calls move from `pendingToolCalls` to the hidden `toolAnswers` in one change of the
   * conversation made only if it is still the version read (ports/storage.ts `Change`); once every
   * call of the step is answered the reply is queued again and resumes on a worker
   * (docs/replies-and-streams.md#tools). Resolves with the calls still waiting.
   * @throws ParleyError `validation_failed` (also an answer of the wrong kind for its call);
   *   `not_found`; `conflict` (a call not pending: unknown or already answered; a completed
   *   conversation; the conversation changed while this was decided — try again)
   */
  async submitToolResults(workspaceId: string, conversationId: string, input: ToolResultsInput): Promise<{ conversationId: string; pendingToolCalls: PendingToolCall[] }> {
    const { results } = parse(ToolResultsSchema, input);
    const current = await this.storage.conversations.get(workspaceId, conversationId);
    if (!current) throw ParleyError.notFound('conversation', conversationId);
    if (current.status !== 'active') throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed.`);
    const waiting = [...(current.pendingToolCalls ?? [])];
    const answered = [...toolAnswersOf(current)];
    const issues: Array<{ path: string; message: string }> = [];
    results.forEach((result, index) => {
      const at = waiting.findIndex((call) => call.id === result.toolCallId);
      const call = waiting[at];
      if (!call) throw new ParleyError(ErrorCode.conflict, `Tool call '${result.toolCallId}' is not waiting for an answer (unknown or already answered).`, { toolCallId: result.toolCallId });
      const isApproval = 'approved' in result;
      // A call awaiting approval takes `approved`; a client tool takes `output` (or a rejection).
      if (call.requiresApproval && call.kind === 'webhook' && !isApproval) issues.push({ path: `results.${index}`, message: 'This call awaits approval: answer {toolCallId, approved, reason?}.' });
      else if (call.kind === 'client' && isApproval && result.approved) issues.push({ path: `results.${index}`, message: 'A client tool is answered with {toolCallId, output} (or rejected with approved: false).' });
      const answer = isApproval ? { approved: result.approved, ...(result.reason !== undefined && { reason: result.reason }) } : { output: result.output };
      waiting.splice(at, 1);
      answered.push({ ...call, answer });
    });
    if (issues.length > 0) throw validationFailed(issues);
    // Arrays cannot be compared in a condition: the stored calls are those read while the version is.
    const set: Partial<PausedConversation> = { pendingToolCalls: waiting, toolAnswers: answered };
    const result = await this.storage.conversations.update(workspaceId, conversationId, { set, ifVersion: [recordVersion(current)] });
    if (!result) throw ParleyError.notFound('conversation', conversationId);
    if (result.outcome === 'unmet') throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' changed while the answers were given; send them again.`);
    if (waiting.length === 0) {
      const latest = await this.storage.messages.page(workspaceId, conversationId, { limit: 1 });
      await this.queue.enqueue(this.job(workspaceId, conversationId, latest?.messages.at(-1)?.id ?? null));
    }
    return { conversationId, pendingToolCalls: waiting };
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
   * Makes one reply (docs/replies-and-streams.md): reads the agent and the latest `contextMessages`
   * messages and calls the model, streaming its deltas and tool calls to the conversation's feed.
   * Each step is stored as an `assistant` message with `metadata.reply: {inReplyTo, model,
   * finishReason, usage, step}` (recording `message.received`), with `toolCalls` when the model asked
   * for tools; webhook tools are then called concurrently and each result stored as a `tool`
   * message, and the model goes on, at most `configuration.maxSteps` steps. A step calling a
   * `client` tool or one that `requiresApproval` pauses the reply: the calls are kept in the
   * conversation's `pendingToolCalls` with the event `reply.requires_action`, and the reply
   * resumes when a later request finds them all answered ({@link submitToolResults}). A request
   * that comes while a reply is paused is answered after it.
   *
   * A failing provider is tried 3 times with backoff; then that step is given up: `reply.failed` is
   * recorded (event and feed) and a log line (without content) says why. Skipped, storing nothing: a
   * conversation gone or completed, an agent inactive or without a configured model, a message
   * already answered (a request handed out twice). `signal` aborts (lease lost, worker stopping):
   * nothing more is stored.
   *
   * Deferred, storing nothing: the agent's model is not configured in this process (a worker that
   * has it makes the reply).
   */
  async generate(job: ReplyJob, signal: AbortSignal, logger?: ReplyLogger): Promise<ReplyOutcome> {
    const { workspaceId, conversationId } = job;
    const conversation = await this.storage.conversations.get(workspaceId, conversationId);
    if (!conversation || conversation.status !== 'active') return 'skipped';
    const agent = await this.storage.agents.get(workspaceId, conversation.agentId);
    if (!agent || agent.status !== 'active') return 'skipped';
    const model = this.models.get(agent.model);
    // Another worker may have it: only a worker that can make a reply acknowledges its request.
    if (!model) return 'deferred';
    let context = await this.context(workspaceId, conversationId);
    const open = openStep(context);
    let outcome: ReplyOutcome = 'skipped';
    if (open) {
      // Paused: this request is answered once the reply resumes (see below).
      if ((conversation.pendingToolCalls ?? []).length > 0) return 'skipped';
      const answers = toolAnswersOf(conversation);
      const reply = open.metadata.reply as StepMetadata;
      await this.finishStep(job, agent, open, answers, signal);
      if (signal.aborted) return 'aborted';
      if (answers.length > 0) {
        // What the API shows stays as it is (no call waits): the version too.
        const cleared: Partial<PausedConversation> = { toolAnswers: [] };
        await this.storage.conversations.update(workspaceId, conversationId, { set: cleared, keepVersion: true });
      }
      // The reply goes on from what it had when it paused; messages stored meanwhile wait for it.
      outcome = await this.steps(job, agent, model, conversation.userId, reply.inReplyTo, reply.step + 1, signal, logger, open.id);
      if (outcome !== 'stored') return outcome;
      // Then they are answered, by one reply to the latest user message stored while it waited.
      context = await this.context(workspaceId, conversationId);
      const asked = context.findLast((message) => message.role === 'user' && message.id > open.id);
      if (!asked) return outcome;
      return this.steps(job, agent, model, conversation.userId, asked.id, 1, signal, logger);
    }
    if (job.inReplyTo !== null && context.some((message) => (message.metadata.reply as StepMetadata | undefined)?.inReplyTo === job.inReplyTo)) return 'skipped';
    return this.steps(job, agent, model, conversation.userId, job.inReplyTo, 1, signal, logger);
  }

  /** Runs steps from `step` on until the model answers without tools, the reply pauses, or `maxSteps`. */
  private async steps(
    job: ReplyJob,
    agent: AgentRecord,
    model: LanguageModel,
    userId: string | null,
    inReplyTo: string | null,
    step: number,
    signal: AbortSignal,
    logger?: ReplyLogger,
    /** A resumed reply's paused step: messages stored after it, but this reply's own, are left for later. */
    pausedAt?: string,
  ): Promise<ReplyOutcome> {
    const { workspaceId, conversationId } = job;
    const ownOrEarlier = (message: Message) =>
      pausedAt === undefined || message.id <= pausedAt || message.role === 'tool' || (message.metadata.reply as StepMetadata | undefined)?.inReplyTo === inReplyTo;
    const tools = agentTools(agent.configuration);
    const maxSteps = agentMaxSteps(agent.configuration);
    for (; step <= maxSteps; step += 1) {
      const context = (await this.context(workspaceId, conversationId)).filter(ownOrEarlier);
      const request: ModelRequest = {
        ...(agent.systemPrompt !== null && { system: agent.systemPrompt }),
        messages: promptMessages(context),
        ...(agent.temperature !== null && { temperature: agent.temperature }),
        ...(agent.maxTokens !== null && { maxTokens: agent.maxTokens }),
        ...(tools.length > 0 && { tools: tools.map(({ name, description, parameters }) => ({ name, description, parameters })) }),
        signal,
      };
      const result = await this.tryModel(model, request, { ...job, inReplyTo }, agent, logger, signal);
      if (typeof result === 'string') return result;
      const message = await this.storeStep({ ...job, inReplyTo }, agent, userId, result, step, step === maxSteps, logger);
      if (!message) return 'skipped';
      if (!message.toolCalls) return 'stored';
      const pending = await this.runCalls(job, agent, message, step === maxSteps, signal);
      if (signal.aborted) return 'aborted';
      if (pending.length > 0) return this.pause(job, inReplyTo, pending);
    }
    return 'stored';
  }

  /** One model call, tried 3 times; the stored step's content, or why there is none. */
  private async tryModel(model: LanguageModel, request: ModelRequest, job: ReplyJob, agent: AgentRecord, logger: ReplyLogger | undefined, signal: AbortSignal) {
    const { workspaceId, conversationId, inReplyTo } = job;
    const fields = { workspaceId, conversationId, inReplyTo, model: agent.model };
    let lastError: unknown;
    for (let attempt = 1; attempt <= TRIES; attempt += 1) {
      if (signal.aborted) return 'aborted' as const;
      try {
        return await this.stream(model, request, job, attempt);
      } catch (error) {
        if (signal.aborted) return 'aborted' as const;
        lastError = error;
        logger?.warn({ ...fields, attempt, error: describeModelError(error) }, 'language model failed');
        if (attempt < TRIES) await sleep(this.options.retryDelaysMs[attempt - 1] ?? this.options.retryDelaysMs.at(-1) ?? 0, signal);
      }
    }
    const error = `The language model failed ${TRIES} times (${describeModelError(lastError)}); the reply was given up.`;
    logger?.warn({ ...fields, attempts: TRIES, error: describeModelError(lastError) }, 'reply given up');
    await this.recordFailure(job, error);
    return 'failed' as const;
  }

  private async stream(model: LanguageModel, request: ModelRequest, job: ReplyJob, attempt: number): Promise<StepResult> {
    let text = '';
    const toolCalls: ToolCall[] = [];
    for await (const part of model.stream(request)) {
      if (part.type === 'text-delta') {
        text += part.delta;
        await this.publish(job.workspaceId, job.conversationId, { type: 'message.delta', inReplyTo: job.inReplyTo, delta: part.delta, attempt });
      } else if (part.type === 'tool-call') {
        toolCalls.push(part.toolCall);
        await this.publish(job.workspaceId, job.conversationId, { type: 'tool.call', inReplyTo: job.inReplyTo, toolCall: part.toolCall });
      } else if (part.type === 'finish') {
        if (text.trim() === '' && toolCalls.length === 0) throw new EmptyReplyError();
        return { text, toolCalls, finishReason: part.finishReason, usage: part.usage };
      }
    }
    throw new EmptyReplyError();
  }

  /** Stores a step as an `assistant` message; `null` when the conversation no longer takes one. */
  private async storeStep(job: ReplyJob, agent: AgentRecord, userId: string | null, result: StepResult, step: number, last: boolean, logger?: ReplyLogger): Promise<Message | null> {
    const cut = result.text.length > MAX_CONTENT;
    const toolCalls = result.toolCalls.length > 0 ? result.toolCalls : null;
    const reply: StepMetadata = {
      inReplyTo: job.inReplyTo,
      model: agent.model,
      finishReason: cut ? 'length' : result.finishReason,
      usage: result.usage,
      step,
      ...(toolCalls && last && { stepLimitReached: true }),
    };
    const message: Message = {
      id: this.ids.next('msg'),
      conversationId: job.conversationId,
      content: cut ? result.text.slice(0, MAX_CONTENT) : result.text,
      role: 'assistant',
      metadata: { reply },
      toolCalls,
      toolCallId: null,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    const usage = { agentId: agent.id, model: agent.model, userId, inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 };
    if (!(await this.append(job.workspaceId, message, usage))) return null;
    logger?.info({ workspaceId: job.workspaceId, conversationId: job.conversationId, messageId: message.id, inReplyTo: job.inReplyTo, model: agent.model, finishReason: reply.finishReason, usage: result.usage, step, toolCalls: toolCalls?.length ?? 0 }, 'reply stored');
    return message;
  }

  /**
   * Runs the calls of a stored step: webhook tools that need no approval are called now,
   * concurrently, and unknown tools get an error; the rest are returned, to wait for the caller.
   * At the step limit every call gets an error result instead: the reply ends there.
   */
  private async runCalls(job: ReplyJob, agent: AgentRecord, step: Message, last: boolean, signal: AbortSignal): Promise<PendingToolCall[]> {
    const tools = new Map(agentTools(agent.configuration).map((tool) => [tool.name, tool]));
    const pending: PendingToolCall[] = [];
    const results = (step.toolCalls ?? []).map(async (call): Promise<[ToolCall, string] | null> => {
      const tool = tools.get(call.name);
      if (last) return [call, errorResult('The reply reached its step limit (configuration.maxSteps); the call was not made.')];
      if (!tool) return [call, errorResult(`No tool is named '${call.name}'.`)];
      if (tool.kind === 'client' || tool.requiresApproval) {
        pending.push({ ...call, kind: tool.kind, requiresApproval: tool.requiresApproval ?? false });
        return null;
      }
      return [call, await callWebhookTool(this.transport, tool, agent.toolsSecret, call, { conversationId: job.conversationId, agentId: agent.id }, this.clock.now(), signal)];
    });
    for (const result of await Promise.all(results)) if (result && !signal.aborted) await this.storeResult(job, result[0], result[1]);
    return pending;
  }

  /** Resumes a paused or interrupted step: every call without a stored result gets one (answers, approved webhooks). */
  private async finishStep(job: ReplyJob, agent: AgentRecord, step: Message, pending: StoredPendingToolCall[], signal: AbortSignal): Promise<void> {
    const context = await this.context(job.workspaceId, job.conversationId);
    const answered = new Set(context.filter((message) => message.role === 'tool').map((message) => message.toolCallId));
    const tools = new Map(agentTools(agent.configuration).map((tool) => [tool.name, tool]));
    const results = (step.toolCalls ?? [])
      .filter((call) => !answered.has(call.id))
      .map(async (call): Promise<[ToolCall, string]> => {
        const waited = pending.find((entry) => entry.id === call.id);
        const result = waited ? answeredResult(waited) : null;
        if (result !== null) return [call, result];
        const tool = tools.get(call.name);
        if (!tool || tool.kind !== 'webhook') return [call, errorResult(tool ? 'The call was never answered.' : `No tool is named '${call.name}'.`)];
        return [call, await callWebhookTool(this.transport, tool, agent.toolsSecret, call, { conversationId: job.conversationId, agentId: agent.id }, this.clock.now(), signal)];
      });
    for (const [call, result] of await Promise.all(results)) if (!signal.aborted) await this.storeResult(job, call, result);
  }

  /** Stores a call's result as a `tool` message (recording `message.sent`). */
  private async storeResult(job: ReplyJob, call: ToolCall, content: string): Promise<void> {
    await this.append(job.workspaceId, {
      id: this.ids.next('msg'),
      conversationId: job.conversationId,
      content,
      role: 'tool',
      metadata: { tool: { name: call.name } },
      toolCalls: null,
      toolCallId: call.id,
      createdAt: new Date(this.clock.now()).toISOString(),
    });
  }

  /** Keeps `pending` on the conversation and records `reply.requires_action` in the same step. */
  private async pause(job: ReplyJob, inReplyTo: string | null, pending: PendingToolCall[]): Promise<ReplyOutcome> {
    const data: ReplyRequiresAction = { conversationId: job.conversationId, inReplyTo, toolCalls: pending };
    const set: Partial<PausedConversation> = { pendingToolCalls: pending, toolAnswers: [] };
    const paused = await this.storage.conversations.update(job.workspaceId, job.conversationId, {
      set,
      where: [{ field: 'status', equals: 'active' }],
      event: domainEvent(this.ids, this.clock, job.workspaceId, 'reply.requires_action', data),
    });
    if (paused?.outcome !== 'applied') return 'skipped';
    await this.publish(job.workspaceId, job.conversationId, { type: 'reply.requires_action', data });
    return 'paused';
  }

  /** Records `reply.failed` (an event with no change: the conversation and its version are left as they are) and tells the feed. */
  private async recordFailure(job: ReplyJob, error: string): Promise<void> {
    const data: ReplyFailed = { conversationId: job.conversationId, inReplyTo: job.inReplyTo, error };
    await this.storage.conversations.update(job.workspaceId, job.conversationId, {
      keepVersion: true,
      event: domainEvent(this.ids, this.clock, job.workspaceId, 'reply.failed', data),
    });
    await this.publish(job.workspaceId, job.conversationId, { type: 'reply.failed', inReplyTo: job.inReplyTo, error });
  }

  private async append(workspaceId: string, message: Message, usage?: UsageRecord): Promise<boolean> {
    return (await this.writer.append(workspaceId, message, usage)) === 'appended';
  }

  private async context(workspaceId: string, conversationId: string): Promise<Message[]> {
    const page = await this.storage.messages.page(workspaceId, conversationId, { limit: this.options.contextMessages });
    return page?.messages ?? [];
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

/** `metadata.reply` of a stored step. */
interface StepMetadata {
  inReplyTo: string | null;
  model: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  /** 1 for a reply's first model call. */
  step: number;
  /** Set on a step that asked for tools at `maxSteps`: its calls were not made and the reply ended. */
  stepLimitReached?: true;
}

/** What one model call produced. */
interface StepResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
}

/**
 * The newest reply step of `context` when its reply is not finished: it asked for tools (and not
 * at the step limit), so results are awaited or were stored before the reply was interrupted.
 */
function openStep(context: readonly Message[]): Message | null {
  const step = context.findLast((message) => message.role === 'assistant' && message.metadata.reply !== undefined);
  if (!step?.toolCalls?.length) return null;
  return (step.metadata.reply as StepMetadata).stepLimitReached ? null : step;
}
