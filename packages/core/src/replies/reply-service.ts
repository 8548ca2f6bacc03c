/** @module Agent replies (README "Agents that reply"): who gets one, asking for one, and making it. */
import { randomUUID } from 'node:crypto';
import { inject, injectable } from '../di.js';
import { ErrorCode, ParleyError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { FeedSignal } from '../ports/conversation-feed.js';
import type { IdGenerator } from '../ports/ids.js';
import type { LanguageModel, ModelRequest, TokenUsage } from '../ports/language-model.js';
import type { ReplyJob, ReplyQueue } from '../ports/reply-queue.js';
import type { OutboxBatch, Storage, UsageRecord } from '../ports/storage.js';
import { domainEvent } from '../services/domain-events.js';
import { MessageWriter } from '../services/message-writer.js';
import { TOKENS } from '../tokens.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import { ToolResultsSchema, type ToolResultsInput } from '../schemas/tools.js';
import { modelFailure } from '../models/model-failure.js';
import { recordVersion } from '../record-version.js';
import { parse, storableJson, storableText, validationFailed } from '../validation.js';
import {
  AGENT_MODELS,
  type Agent,
  type AgentRecord,
  type Conversation,
  type Message,
  type PendingToolCall,
  type ReplyCancelled,
  type ReplyContext,
  type ReplyFailed,
  type ReplyRequiresAction,
  type Tool,
  type ToolCall,
} from '../types.js';
import {
  answeredResult,
  callWebhookTool,
  errorResult,
  promptMessages,
  toolAnswersOf,
  type PausedConversation,
  type StoredPendingToolCall,
} from './tool-calls.js';
import type { WorkspaceScope } from '../ports/scope.js';
import type { ReplyOptions } from './reply-options.js';
import { DEFAULT_CONTEXT_WINDOW, fitContext, promptBudget } from './context-budget.js';
import { o200kCounter } from './token-count.js';
import { CANCELLED_RESULT, wasCancelled, type RepliesCancelled, type ReplyFinishReason } from './reply-cancel.js';
import type { Tracing } from '../tracing/tracing.js';
import { McpFailure, type McpClients } from './mcp/mcp-clients.js';
import { agentMcpTools, callMcpTool, mcpNeedsApproval, type AgentMcpTools } from './mcp/mcp-tools.js';
import { activeTraceContext, contextFromTrace, parseTraceContext } from '../tracing/trace-context.js';
import { trace } from '@opentelemetry/api';
import {
  chatSpan,
  executeToolSpan,
  invokeAgentSpan,
  recordChatResult,
  recordToolResult,
  type ReplyTrace,
  type ToolKind,
} from '../tracing/gen-ai.js';

/** Where replies report (a {@link WorkerLogger} fits). Entries carry ids, model names and error kinds, never content. */
export interface ReplyLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * What happened to one reply request: `paused` means it waits for tool results (docs/replies-and-streams.md#tools);
 * `deferred` means this process has no language model for the agent's `model`, so it leaves the
 * request to a worker that has one (docs/replies-and-streams.md); `cancelled` means it was stopped
 * by `POST …/reply/cancel` (docs/replies-and-streams.md#stopping-a-reply).
 */
export const REPLY_OUTCOMES = ['stored', 'paused', 'failed', 'skipped', 'aborted', 'deferred', 'cancelled'] as const;
/** One of {@link REPLY_OUTCOMES}. */
export type ReplyOutcome = (typeof REPLY_OUTCOMES)[number];

/** A reply under way ({@link ReplyService.inProgress}). */
export interface ReplyInProgress {
  /** The message it answers (`metadata.reply.inReplyTo` of its steps). */
  inReplyTo: string;
  /** Its first stored step, the reply's id as a chat shows it; `null` before one is stored. */
  firstStepId: string | null;
  /** It waits for tool results or approvals (`pendingToolCalls`). */
  paused: boolean;
}

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
 * Agent replies. An agent replies when it is `active`, its `model` names a configured language
 * model and its `autoReply` is on (automatic replies) — or when asked
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
    @inject(TOKENS.tracing) private readonly tracing: Tracing,
    @inject(TOKENS.mcpClients) private readonly mcp: McpClients,
  ) {}

  /** Model names warned about as configured in no process that relayed their requests. */
  private readonly unservedWarned = new Set<string>();

  /**
   * Starts loading the tokenizer replies count their prompts with (docs/replies-and-streams.md
   * #context-that-fits-the-model) when this process has language models, so its first reply does
   * not wait for it. Run by the reply worker at start; without it the first reply loads it.
   */
  preload(): void {
    if (this.models.size > 0) o200kCounter().catch(() => {});
  }

  /** The agent model names this process has a language model for: the reply jobs its worker leases. */
  modelNames(): string[] {
    return [...this.models.keys()];
  }

  /**
   * The model of the agent a request is for, as stored now (it may have changed since the request
   * was queued); `null` when its conversation or agent is gone.
   */
  async agentModel(job: ReplyJob): Promise<string | null> {
    const conversation = await this.storage.conversations.get({ workspaceId: job.workspaceId }, job.conversationId);
    const agent =
      conversation && (await this.storage.agents.get({ workspaceId: job.workspaceId }, conversation.agentId));
    return agent?.model ?? null;
  }

  /** True when `agent` would reply on its own to a user message (not counting the conversation's status). */
  repliesAutomatically(agent: Agent): boolean {
    return agent.status === 'active' && this.models.has(agent.model) && agent.autoReply;
  }

  /**
   * True when a reply of `agent` to a user message is to be queued, whichever process relays the
   * message: its model is configured here, or it is a name outside the spec's three — which an
   * agent can only have been given by a process that had it configured. Such a request waits for a
   * worker with that model (a relay in a worker without `MODELS` must not drop it). Also read by
   * `POST /api/chat`, which asks for a reply itself only when none comes on its own.
   */
  repliesSomewhere(agent: Agent): boolean {
    const configuredSomewhere =
      this.models.has(agent.model) || !(AGENT_MODELS as readonly string[]).includes(agent.model);
    return agent.status === 'active' && configuredSomewhere && agent.autoReply;
  }

  /**
   * Gives a request up that no worker could make (`deferred` for longer than the give-up time):
   * `reply.failed` is recorded (event, webhooks) and goes to the conversation's streams, and the
   * reason to the log.
   */
  async giveUp(job: ReplyJob, error: string, logger?: ReplyLogger): Promise<void> {
    logger?.warn(
      { workspaceId: job.workspaceId, conversationId: job.conversationId, inReplyTo: job.inReplyTo, error },
      'reply given up',
    );
    await this.recordFailure(job, error);
  }

  /**
   * Queues a reply of the conversation's agent to its latest message (`POST
   * /api/conversations/:id/reply`), also for an agent whose `autoReply` is off.
   * @throws ParleyError `not_found` (no such conversation); `conflict` when the conversation is
   *   completed, its agent is inactive or the agent's model has no configured language model
   */
  async request(scope: WorkspaceScope, conversationId: string): Promise<ReplyRequested> {
    const conversation = await this.storage.conversations.get(scope, conversationId);
    if (!conversation) throw ParleyError.notFound('conversation', conversationId);
    if (conversation.status === 'completed')
      throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed and gets no replies.`);
    const agent = await this.storage.agents.get(scope, conversation.agentId);
    if (!agent || agent.status !== 'active')
      throw new ParleyError(ErrorCode.conflict, `The agent of conversation '${conversationId}' is inactive.`);
    if (!this.models.has(agent.model)) {
      throw new ParleyError(
        ErrorCode.conflict,
        `No language model is configured for the agent's model '${agent.model}'.`,
        { model: agent.model },
      );
    }
    const latest = await this.storage.messages.page(scope, conversationId, { limit: 1 });
    const inReplyTo = latest?.messages.at(-1)?.id ?? null;
    await this.queue.enqueue(this.job(scope.workspaceId, conversationId, inReplyTo, agent.model, activeTraceContext()));
    return { conversationId, inReplyTo };
  }

  /**
   * The reply of a conversation that is under way (`GET /api/chat/:id/stream` resumes it): paused
   * for tool calls (`pendingToolCalls`), or asked for and not yet stored nor given up — a request of
   * the conversation waits in the reply queue or is being made — for the latest `user` message, or
   * for the reply whose newest step asked for tools whose results are still to come. `null` when
   * none is (also for a completed conversation).
   * @throws ParleyError `not_found` (no such conversation)
   */
  async inProgress(scope: WorkspaceScope, conversationId: string): Promise<ReplyInProgress | null> {
    const conversation = await this.storage.conversations.get(scope, conversationId);
    if (!conversation) throw ParleyError.notFound('conversation', conversationId);
    if (conversation.status !== 'active') return null;
    const pending = conversation.pendingToolCalls ?? [];
    const paused = pending.length > 0;
    if (!paused && (await this.queue.waiting(scope, conversationId)) === 0) return null;
    const context = await this.context(scope, conversationId);
    const stepsOf = (inReplyTo: string) =>
      context.filter((message) => (message.metadata.reply as StepMetadata | undefined)?.inReplyTo === inReplyTo);
    let inReplyTo: string | null | undefined;
    if (paused) {
      const step = context.findLast((message) => message.toolCalls?.some((call) => call.id === pending[0]!.id));
      inReplyTo = (step?.metadata.reply as StepMetadata | undefined)?.inReplyTo;
    } else {
      const open = openStep(context);
      inReplyTo = open
        ? (open.metadata.reply as StepMetadata).inReplyTo
        : context.findLast((message) => message.role === 'user')?.id;
      // Answered already: the request waiting is a second one for it (at-least-once), or for no new message.
      if (!open && typeof inReplyTo === 'string' && stepsOf(inReplyTo).some((step) => finalStep(step))) return null;
    }
    if (typeof inReplyTo !== 'string') return null;
    return { inReplyTo, firstStepId: stepsOf(inReplyTo)[0]?.id ?? null, paused };
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
  async submitToolResults(
    scope: WorkspaceScope,
    conversationId: string,
    input: ToolResultsInput,
  ): Promise<{ conversationId: string; pendingToolCalls: PendingToolCall[] }> {
    const { results } = parse(ToolResultsSchema, input);
    const current = await this.storage.conversations.get(scope, conversationId);
    if (!current) throw ParleyError.notFound('conversation', conversationId);
    if (current.status !== 'active')
      throw new ParleyError(ErrorCode.conflict, `Conversation '${conversationId}' is completed.`);
    const waiting = [...(current.pendingToolCalls ?? [])];
    const answered = [...toolAnswersOf(current)];
    const issues: Array<{ path: string; message: string }> = [];
    results.forEach((result, index) => {
      const at = waiting.findIndex((call) => call.id === result.toolCallId);
      const call = waiting[at];
      if (!call)
        throw new ParleyError(
          ErrorCode.conflict,
          `Tool call '${result.toolCallId}' is not waiting for an answer (unknown or already answered).`,
          { toolCallId: result.toolCallId },
        );
      const isApproval = 'approved' in result;
      // A call awaiting approval takes `approved`; a client tool takes `output` (or a rejection).
      if (call.requiresApproval && call.kind !== 'client' && !isApproval)
        issues.push({
          path: `results.${index}`,
          message: 'This call awaits approval: answer {toolCallId, approved, reason?}.',
        });
      else if (call.kind === 'client' && isApproval && result.approved)
        issues.push({
          path: `results.${index}`,
          message: 'A client tool is answered with {toolCallId, output} (or rejected with approved: false).',
        });
      const answer = isApproval
        ? { approved: result.approved, ...(result.reason !== undefined && { reason: result.reason }) }
        : { output: result.output };
      waiting.splice(at, 1);
      answered.push({ ...call, answer });
    });
    if (issues.length > 0) throw validationFailed(issues);
    // Arrays cannot be compared in a condition: the stored calls are those read while the version is.
    const set: Partial<PausedConversation> = { pendingToolCalls: waiting, toolAnswers: answered };
    const result = await this.storage.conversations.update(scope, conversationId, {
      set,
      ifVersion: [recordVersion(current)],
    });
    if (!result) throw ParleyError.notFound('conversation', conversationId);
    if (result.outcome === 'unmet')
      throw new ParleyError(
        ErrorCode.conflict,
        `Conversation '${conversationId}' changed while the answers were given; send them again.`,
      );
    if (waiting.length === 0) {
      const latest = await this.storage.messages.page(scope, conversationId, { limit: 1 });
      // An agent deleted meanwhile: any worker takes the request and skips it.
      const model = (await this.storage.agents.get(scope, current.agentId))?.model ?? '';
      const inReplyTo = latest?.messages.at(-1)?.id ?? null;
      await this.queue.enqueue(this.job(scope.workspaceId, conversationId, inReplyTo, model, activeTraceContext()));
    }
    return { conversationId, pendingToolCalls: waiting };
  }

  /**
   * Queues the automatic replies a batch of recorded events calls for: one per `message.sent` of a
   * `user` message whose conversation is active and whose agent replies automatically, with a model
   * configured here or, as its name says, in another process (see `repliesSomewhere`). Run by the
   * outbox relay before it acknowledges the batch, so a request is never lost (at-least-once: a
   * batch handed out twice queues twice, and {@link generate} answers a message once).
   * A request for a model this process has no language model for is left to the workers that have
   * it, which `logger` is told once per model. Resolves with the number of requests queued.
   */
  async queueAutomaticReplies(batch: OutboxBatch, logger?: ReplyLogger): Promise<number> {
    const scope = { workspaceId: batch.workspaceId };
    const asked = batch.events.filter(
      (event) => event.type === 'message.sent' && (event.data as Message).role === 'user',
    );
    // The batch's conversations, then their agents, each read once and all at once (a store
    // gathers reads made together: one round trip for a batch spread over many conversations).
    const conversations = await readEach(
      asked.map((event) => (event.data as Message).conversationId),
      (id) => this.storage.conversations.get(scope, id),
    );
    const active = [...conversations.values()].filter((found) => found?.status === 'active');
    const agents = await readEach(
      active.map((found) => found!.agentId),
      (id) => this.storage.agents.get(scope, id),
    );
    const jobs: ReplyJob[] = [];
    for (const event of asked) {
      const message = event.data as Message;
      const found = conversations.get(message.conversationId);
      if (!found || found.status !== 'active') continue;
      const owner = agents.get(found.agentId);
      if (!owner || !this.repliesSomewhere(owner)) continue;
      // The reply continues the trace the message was sent in (docs/observability.md#traces).
      const traceContext = batch.traceContexts?.[event.id];
      jobs.push(this.job(batch.workspaceId, found.id, message.id, owner.model, traceContext));
    }
    for (const job of jobs) {
      await this.queue.enqueue(job);
      if (!this.models.has(job.model) && !this.unservedWarned.has(job.model)) {
        this.unservedWarned.add(job.model);
        logger?.warn(
          { workspaceId: job.workspaceId, conversationId: job.conversationId, model: job.model },
          `reply requests for model '${job.model}' are left to workers that have it: ` +
            'this process has no language model for it (MODELS; said once per model)',
        );
      }
    }
    return jobs.length;
  }

  /**
   * Makes one reply (docs/replies-and-streams.md): reads the agent and the latest `contextMessages`
   * messages and calls the model, streaming its deltas and tool calls to the conversation's feed.
   * Each step is stored as an `assistant` message with `metadata.reply: {inReplyTo, model,
   * finishReason, usage, step}` (recording `message.received`), with `toolCalls` when the model asked
   * for tools; webhook tools are then called concurrently and each result stored as a `tool`
   * message, and the model goes on, at most the agent's `maxSteps` steps. A step calling a
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
   * Deferred, storing nothing: the agent's model is not configured in this process (the reply
   * worker hands the request to the workers that have it, or gives it up when it waited too long).
   */
  async generate(job: ReplyJob, signal: AbortSignal, logger?: ReplyLogger): Promise<ReplyOutcome> {
    const { workspaceId, conversationId } = job;
    const scope = { workspaceId };
    const conversation = await this.storage.conversations.get(scope, conversationId);
    if (!conversation || conversation.status !== 'active') return 'skipped';
    const agent = await this.storage.agents.get(scope, conversation.agentId);
    if (!agent || agent.status !== 'active') return 'skipped';
    const model = this.models.get(agent.model);
    // Another worker may have it: only a worker that can make a reply acknowledges its request.
    if (!model) return 'deferred';
    // One trace from the request that asked for the reply (docs/observability.md#traces).
    const reply: ReplyTrace = { agent, conversationId, workspaceId, model };
    return this.tracing.inSpan(
      ...invokeAgentSpan(reply, job.inReplyTo),
      contextFromTrace(job.traceContext),
      async (span) => {
        const outcome = await this.reply(job, conversation, agent, model, signal, logger);
        span.setAttribute('parley.reply.outcome', outcome);
        return outcome;
      },
    );
  }

  /** The rest of {@link generate}, once the agent replies with `model`. */
  private async reply(
    job: ReplyJob,
    conversation: Conversation,
    agent: AgentRecord,
    model: LanguageModel,
    signal: AbortSignal,
    logger: ReplyLogger | undefined,
  ): Promise<ReplyOutcome> {
    const { workspaceId, conversationId } = job;
    const scope = { workspaceId };
    let context = await this.context(scope, conversationId);
    const open = openStep(context);
    let outcome: ReplyOutcome = 'skipped';
    if (open) {
      // Paused: this request is answered once the reply resumes (see below).
      if ((conversation.pendingToolCalls ?? []).length > 0) return 'skipped';
      const answers = toolAnswersOf(conversation);
      const reply = open.metadata.reply as StepMetadata;
      // The resumed reply runs in the trace of the request that answered; it links to the one that paused.
      const paused = parseTraceContext((conversation as PausedConversation).pausedTraceContext);
      if (paused) trace.getActiveSpan()?.addLink({ context: paused });
      await this.finishStep(job, agent, open, answers, signal);
      if (wasCancelled(signal)) {
        await this.closeReply(job, reply.inReplyTo, agent.model, open, reply.step + 1);
        await this.clearAnswers(scope, conversationId);
        return 'cancelled';
      }
      if (signal.aborted) return 'aborted';
      if (answers.length > 0) await this.clearAnswers(scope, conversationId);
      // The reply goes on from what it had when it paused; messages stored meanwhile wait for it.
      outcome = await this.steps(
        job,
        agent,
        model,
        conversation.userId,
        reply.inReplyTo,
        reply.step + 1,
        signal,
        logger,
        open.id,
      );
      if (outcome !== 'stored') return outcome;
      // Then they are answered, by one reply to the latest user message stored while it waited.
      context = await this.context(scope, conversationId);
      const asked = context.findLast((message) => message.role === 'user' && message.id > open.id);
      if (!asked) return outcome;
      return this.steps(job, agent, model, conversation.userId, asked.id, 1, signal, logger);
    }
    if (
      job.inReplyTo !== null &&
      context.some((message) => (message.metadata.reply as StepMetadata | undefined)?.inReplyTo === job.inReplyTo)
    )
      return 'skipped';
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
    const scope = { workspaceId };
    const ownOrEarlier = (message: Message) =>
      pausedAt === undefined ||
      message.id <= pausedAt ||
      message.role === 'tool' ||
      (message.metadata.reply as StepMetadata | undefined)?.inReplyTo === inReplyTo;
    const { tools, maxSteps } = agent;
    for (; step <= maxSteps; step += 1) {
      const mcp = await this.mcpTools(job, agent, inReplyTo, signal, logger);
      if (typeof mcp === 'string') return mcp;
      const context = (await this.context(scope, conversationId)).filter(ownOrEarlier);
      const offered = [
        ...tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
        ...mcp.tools,
      ];
      const request: ModelRequest = {
        ...(agent.systemPrompt !== null && { system: agent.systemPrompt }),
        messages: promptMessages(context),
        ...(agent.temperature !== null && { temperature: agent.temperature }),
        ...(agent.maxTokens !== null && { maxTokens: agent.maxTokens }),
        ...(offered.length > 0 && { tools: offered }),
        signal,
      };
      const fitted = await this.fitPrompt({ ...job, inReplyTo }, agent, request, logger);
      if (!fitted) return 'failed';
      const tried = await this.tryModel(
        model,
        request,
        { ...job, inReplyTo },
        agent,
        step,
        logger,
        signal,
        mcp.targets,
      );
      if (typeof tried === 'string') return tried;
      const result: StepResult = { ...tried, context: fitted };
      // Stopped while the model wrote: what it wrote is stored (a reply past its first step is
      // closed by it even when empty, so no later request takes it up again).
      if (result.finishReason === 'cancelled' && result.text.trim() === '' && step === 1) return 'cancelled';
      const message = await this.storeStep(
        { ...job, inReplyTo },
        agent,
        userId,
        result,
        step,
        step === maxSteps,
        logger,
      );
      if (!message) return 'skipped';
      if (result.finishReason === 'cancelled') return 'cancelled';
      if (!message.toolCalls) return 'stored';
      const pending = await this.runCalls(job, agent, message, step === maxSteps, signal);
      if (wasCancelled(signal)) {
        await this.closeReply({ ...job, inReplyTo }, inReplyTo, agent.model, message, step + 1);
        return 'cancelled';
      }
      if (signal.aborted) return 'aborted';
      if (pending.length > 0) return this.pause(job, inReplyTo, pending);
    }
    return 'stored';
  }

  /**
   * Fits `request.messages` into the agent's model's context window (docs/replies-and-streams.md
   * #context-that-fits-the-model), leaving older turns out, and tells the stream when it did.
   * `null` when even the newest turn does not fit: the reply is then given up with `reply.failed`
   * saying so (the model is not called).
   */
  private async fitPrompt(
    job: ReplyJob,
    agent: AgentRecord,
    request: ModelRequest,
    logger?: ReplyLogger,
  ): Promise<ReplyContext | null> {
    const window = this.options.contextWindows?.get(agent.model) ?? DEFAULT_CONTEXT_WINDOW;
    const budget = promptBudget(window, agent.maxTokens);
    const { system, tools, messages } = request;
    const fitted = fitContext({ system, tools, messages, budget, count: await o200kCounter() });
    const { workspaceId, conversationId, inReplyTo } = job;
    if (!fitted.fits) {
      const error =
        `The conversation's newest turn needs about ${fitted.tokens} tokens with the system prompt and tools, ` +
        `more than the ${Math.max(0, budget)} the model '${agent.model}' has for a prompt (contextWindow ` +
        `${window} less ${window - budget} kept for the reply); the reply was given up.`;
      logger?.warn({ workspaceId, conversationId, inReplyTo, model: agent.model, error }, 'reply given up');
      await this.recordFailure(job, error);
      return null;
    }
    request.messages = fitted.messages;
    if (fitted.context.trimmed > 0)
      await this.publish({ workspaceId }, conversationId, {
        type: 'context.trimmed',
        inReplyTo,
        context: fitted.context,
      });
    return fitted.context;
  }

  /**
   * The MCP tools of `agent` for a step (docs/mcp.md), or — when a server cannot list its tools —
   * `failed`, recorded with `reply.failed` saying which server and why.
   */
  private async mcpTools(
    job: ReplyJob,
    agent: AgentRecord,
    inReplyTo: string | null,
    signal: AbortSignal,
    logger?: ReplyLogger,
  ): Promise<AgentMcpTools | 'failed' | 'aborted'> {
    if ((agent.mcpServers ?? []).length === 0) return { tools: [], targets: new Map(), skipped: [] };
    const { workspaceId, conversationId } = job;
    try {
      const found = await agentMcpTools(this.mcp, { workspaceId }, agent, {
        reserved: new Set(agent.tools.map((tool) => tool.name)),
        signal,
      });
      for (const skipped of found.skipped)
        logger?.warn({ workspaceId, conversationId, ...skipped }, 'MCP tool left out of the reply');
      return found;
    } catch (error) {
      if (signal.aborted) return 'aborted';
      const failure = error instanceof McpFailure ? error : new McpFailure('unreachable', String(error));
      logger?.warn({ workspaceId, conversationId, inReplyTo, mcpFailure: failure.kind }, 'MCP tools unavailable');
      await this.recordFailure({ ...job, inReplyTo }, `${failure.message} The reply was given up.`);
      return 'failed';
    }
  }

  /** One model call, tried 3 times (each in its `chat` span); the stored step's content, or why there is none. */
  private async tryModel(
    model: LanguageModel,
    request: ModelRequest,
    job: ReplyJob,
    agent: AgentRecord,
    step: number,
    logger: ReplyLogger | undefined,
    signal: AbortSignal,
    mcpTargets: AgentMcpTools['targets'],
  ) {
    const { workspaceId, conversationId, inReplyTo } = job;
    const fields = { workspaceId, conversationId, inReplyTo, model: agent.model };
    const reply: ReplyTrace = { agent, conversationId, workspaceId, model };
    const capture = this.tracing.captureContent;
    let lastError: unknown;
    for (let attempt = 1; attempt <= TRIES; attempt += 1) {
      if (wasCancelled(signal)) return cancelledStep('');
      if (signal.aborted) return 'aborted' as const;
      try {
        return await this.tracing.inSpan(
          ...chatSpan(reply, request, { step, attempt }, capture),
          undefined,
          async (span) => {
            const result = await this.stream(model, request, job, attempt, mcpTargets);
            recordChatResult(span, result, capture);
            return result;
          },
        );
      } catch (error) {
        if (wasCancelled(signal)) return cancelledStep('');
        if (signal.aborted) return 'aborted' as const;
        lastError = error;
        const { description, ...failure } = modelFailure(error);
        logger?.warn({ ...fields, attempt, error: description, ...failure }, `language model failed: ${description}`);
        if (attempt < TRIES)
          await sleep(this.options.retryDelaysMs[attempt - 1] ?? this.options.retryDelaysMs.at(-1) ?? 0, signal);
      }
    }
    const { description, ...failure } = modelFailure(lastError);
    const error = `The language model failed ${TRIES} times (${description}); the reply was given up.`;
    logger?.warn({ ...fields, attempts: TRIES, error: description, ...failure }, 'reply given up');
    await this.recordFailure(job, error);
    return 'failed' as const;
  }

  private async stream(
    model: LanguageModel,
    request: ModelRequest,
    job: ReplyJob,
    attempt: number,
    mcpTargets: AgentMcpTools['targets'],
  ): Promise<StepResult> {
    let text = '';
    // A delta ending in a high surrogate keeps it for the next delta, which may hold its pair.
    let held = '';
    const toolCalls: ToolCall[] = [];
    // The model's strings are repaired as they arrive, before they are published or stored: U+0000
    // and unpaired surrogates become U+FFFD (docs/errors.md#strings).
    const publishDelta = async (raw: string) => {
      const delta = storableText(raw);
      text += delta;
      const signal: FeedSignal = { type: 'message.delta', inReplyTo: job.inReplyTo, delta, attempt };
      await this.publish({ workspaceId: job.workspaceId }, job.conversationId, signal);
    };
    // A cancelled reply keeps the text written so far (tool calls not finished are dropped).
    const parts = stopOnCancel(model.stream(request), request.signal, () => cancelledStep(text));
    for await (const part of parts) {
      if ('cancelled' in part) return part.cancelled;
      if (part.type === 'text-delta') {
        const joined = held + part.delta;
        held = HIGH_SURROGATE_AT_END.test(joined) ? joined.slice(-1) : '';
        if (joined.length > held.length) await publishDelta(joined.slice(0, joined.length - held.length));
        continue;
      }
      if (held !== '') await publishDelta(held);
      held = '';
      if (part.type === 'tool-call') {
        // Parley's own id: providers may number calls per response (`call_0` each time), and a
        // reused id would match another call's result or approval (docs/replies-and-streams.md#tools).
        const { name, arguments: args } = part.toolCall;
        // An MCP tool is stored by its name on the server, with the server's label (docs/mcp.md).
        const mcp = mcpTargets.get(name);
        const toolCall: ToolCall = {
          id: this.ids.next('call'),
          name: mcp ? mcp.name : storableText(name),
          arguments: storableJson(args),
          ...(mcp && { server: mcp.server }),
        };
        toolCalls.push(toolCall);
        const signal: FeedSignal = { type: 'tool.call', inReplyTo: job.inReplyTo, toolCall };
        await this.publish({ workspaceId: job.workspaceId }, job.conversationId, signal);
      } else if (part.type === 'finish') {
        if (text.trim() === '' && toolCalls.length === 0) throw new EmptyReplyError();
        const { finishReason, usage, responseModel } = part;
        return { text, toolCalls, finishReason, usage, ...(responseModel !== undefined && { responseModel }) };
      }
    }
    throw new EmptyReplyError();
  }

  /** Stores a step as an `assistant` message; `null` when the conversation no longer takes one. */
  private async storeStep(
    job: ReplyJob,
    agent: AgentRecord,
    userId: string | null,
    result: StepResult,
    step: number,
    last: boolean,
    logger?: ReplyLogger,
  ): Promise<Message | null> {
    const cut = result.text.length > MAX_CONTENT;
    const toolCalls = result.toolCalls.length > 0 ? result.toolCalls : null;
    const reply: StepMetadata = {
      inReplyTo: job.inReplyTo,
      model: agent.model,
      finishReason: cut ? 'length' : result.finishReason,
      usage: result.usage,
      step,
      ...(toolCalls && last && { stepLimitReached: true }),
      ...(result.context && { context: result.context }),
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
    const usage = {
      agentId: agent.id,
      model: agent.model,
      userId,
      inputTokens: result.usage.inputTokens ?? 0,
      outputTokens: result.usage.outputTokens ?? 0,
    };
    if (!(await this.append({ workspaceId: job.workspaceId }, message, usage))) return null;
    logger?.info(
      {
        workspaceId: job.workspaceId,
        conversationId: job.conversationId,
        messageId: message.id,
        inReplyTo: job.inReplyTo,
        model: agent.model,
        finishReason: reply.finishReason,
        usage: result.usage,
        step,
        toolCalls: toolCalls?.length ?? 0,
      },
      'reply stored',
    );
    return message;
  }

  /**
   * Runs the calls of a stored step: webhook tools that need no approval are called now,
   * concurrently, and unknown tools get an error; the rest are returned, to wait for the caller.
   * At the step limit every call gets an error result instead: the reply ends there.
   */
  private async runCalls(
    job: ReplyJob,
    agent: AgentRecord,
    step: Message,
    last: boolean,
    signal: AbortSignal,
  ): Promise<PendingToolCall[]> {
    const tools = new Map(agent.tools.map((tool) => [tool.name, tool]));
    const pending: PendingToolCall[] = [];
    const results = (step.toolCalls ?? []).map(async (call): Promise<[ToolCall, string] | null> => {
      const tool = tools.get(call.name);
      if (last) return [call, errorResult('The reply reached its step limit (maxSteps); the call was not made.')];
      if (call.server !== undefined) {
        const server = agent.mcpServers.find((entry) => entry.label === call.server);
        if (server && mcpNeedsApproval(server, call.name)) {
          pending.push({ ...call, kind: 'mcp', requiresApproval: true });
          return null;
        }
        return this.callMcp(job, agent, call, signal);
      }
      if (!tool) return [call, errorResult(`No tool is named '${call.name}'.`)];
      if (tool.kind === 'client' || tool.requiresApproval) {
        pending.push({ ...call, kind: tool.kind, requiresApproval: tool.requiresApproval ?? false });
        return null;
      }
      return this.callWebhook(job, agent, tool, call, signal);
    });
    for (const result of await Promise.all(results))
      if (result && !signal.aborted) await this.storeResult(job, result[0], result[1]);
    return pending;
  }

  /** `call` made to its webhook `tool`, with its result (docs/replies-and-streams.md#tools). */
  private async callWebhook(
    job: ReplyJob,
    agent: AgentRecord,
    tool: Tool,
    call: ToolCall,
    signal: AbortSignal,
  ): Promise<[ToolCall, string]> {
    const context = { conversationId: job.conversationId, agentId: agent.id };
    const result = await this.executeTool(job, agent, call, 'webhook', () =>
      callWebhookTool(this.transport, tool, agent.toolsSecret, call, context, this.clock.now(), signal),
    );
    return [call, result];
  }

  /** `call` made to its agent's MCP server, with its result (docs/mcp.md), in its `execute_tool` span. */
  private async callMcp(
    job: ReplyJob,
    agent: AgentRecord,
    call: ToolCall,
    signal: AbortSignal,
  ): Promise<[ToolCall, string]> {
    const result = await this.executeTool(job, agent, call, 'mcp', () =>
      callMcpTool(this.mcp, { workspaceId: job.workspaceId }, agent, call, { signal }),
    );
    return [call, result];
  }

  /** `run`, the making of `call`'s result, inside the call's `execute_tool` span (docs/observability.md#spans). */
  private executeTool(
    job: ReplyJob,
    agent: AgentRecord,
    call: ToolCall,
    kind: ToolKind,
    run: () => Promise<string>,
  ): Promise<string> {
    const capture = this.tracing.captureContent;
    const reply = { agent, conversationId: job.conversationId };
    return this.tracing.inSpan(...executeToolSpan(reply, call, kind, capture), undefined, async (span) => {
      const result = await run();
      recordToolResult(span, result, capture);
      return result;
    });
  }

  /** Resumes a paused or interrupted step: every call without a stored result gets one (answers, approved webhooks). */
  private async finishStep(
    job: ReplyJob,
    agent: AgentRecord,
    step: Message,
    pending: StoredPendingToolCall[],
    signal: AbortSignal,
  ): Promise<void> {
    const context = await this.context({ workspaceId: job.workspaceId }, job.conversationId);
    const answered = new Set(context.filter((message) => message.role === 'tool').map((message) => message.toolCallId));
    const tools = new Map(agent.tools.map((tool) => [tool.name, tool]));
    const results = (step.toolCalls ?? [])
      .filter((call) => !answered.has(call.id))
      .map(async (call): Promise<[ToolCall, string]> => {
        const waited = pending.find((entry) => entry.id === call.id);
        const result = waited ? answeredResult(waited) : null;
        // The caller's answer (a client tool's output, a rejection) is the call's result.
        if (result !== null) return [call, await this.executeTool(job, agent, call, waited!.kind, async () => result)];
        if (call.server !== undefined) {
          // Approved, or never needing approval (a step interrupted before its calls were made).
          const server = agent.mcpServers.find((entry) => entry.label === call.server);
          if (!waited && server && mcpNeedsApproval(server, call.name))
            return [call, errorResult('The call was never answered.')];
          return this.callMcp(job, agent, call, signal);
        }
        const tool = tools.get(call.name);
        if (!tool || tool.kind !== 'webhook')
          return [call, errorResult(tool ? 'The call was never answered.' : `No tool is named '${call.name}'.`)];
        return this.callWebhook(job, agent, tool, call, signal);
      });
    for (const [call, result] of await Promise.all(results))
      if (!signal.aborted) await this.storeResult(job, call, result);
  }

  /**
   * Stops the replies of a conversation (`POST /api/conversations/:id/reply/cancel`,
   * docs/replies-and-streams.md#stopping-a-reply): in one atomic step of the reply queue, requests
   * that wait are removed and the one being made is marked, which its worker (in any process) learns
   * within a second, aborting the model call and storing the text written so far with
   * `finishReason: "cancelled"`. A reply paused for tool results is closed here: each call waiting
   * gets `{"error":"cancelled"}` as its result, an empty `assistant` step with `finishReason:
   * "cancelled"` ends the reply, and `pendingToolCalls` is emptied. Each reply stopped records
   * `reply.cancelled` (event, webhooks, streams). Resolves with their `inReplyTo`, `[]` when none.
   * @throws ParleyError `not_found` (no such conversation); `conflict` when answers to the paused
   *   calls kept coming while it was being closed
   */
  async cancel(scope: WorkspaceScope, conversationId: string): Promise<RepliesCancelled> {
    const conversation = await this.storage.conversations.get(scope, conversationId);
    if (!conversation) throw ParleyError.notFound('conversation', conversationId);
    const { removed, running } = await this.queue.cancel(scope, conversationId);
    const stopped = [...running, ...removed].map((job) => job.inReplyTo);
    // A reply being made closes itself (its worker stops it); a paused one has no worker.
    const paused = await this.closePaused(scope, conversation, running.length > 0, stopped);
    const cancelled = [...new Set([...stopped, ...paused])];
    for (const inReplyTo of cancelled)
      if (!paused.includes(inReplyTo))
        await this.recordCancelled(scope, { conversationId, inReplyTo }, { keepVersion: true });
    return { cancelled };
  }

  /**
   * Closes the reply that waits for tool results, or whose answers are all in and whose resumption
   * no worker holds: see {@link cancel}. The step is closed first (its calls' results and the
   * closing step stored), then `pendingToolCalls` is emptied with the event in one change, made
   * only while the conversation still waits for the calls seen before closing (an answer coming
   * meanwhile may have queued the resumption: that is stopped too, and it looks again). So no
   * moment leaves a call without a result and no longer waiting, which a later request would take
   * up (an unanswered approval must never be called). Resolves with the reply's `inReplyTo` (`[]`
   * when none waited), adding to `stopped` what a later look removed from the queue.
   */
  private async closePaused(
    scope: WorkspaceScope,
    read: Conversation,
    running: boolean,
    stopped: Array<string | null>,
  ): Promise<Array<string | null>> {
    const waiting = (conversation: Conversation) =>
      JSON.stringify(
        [conversation.pendingToolCalls ?? [], toolAnswersOf(conversation)].map((calls) => calls.map((call) => call.id)),
      );
    let current: Conversation | null = read;
    let data: ReplyCancelled = { conversationId: read.id, inReplyTo: null };
    for (let look = 1; current; look += 1) {
      const answered = toolAnswersOf(current).length > 0 && !running;
      if (current.status !== 'active' || ((current.pendingToolCalls ?? []).length === 0 && !answered)) return [];
      const seen = waiting(current);
      const step = openStep(await this.context(scope, current.id));
      const reply = step?.metadata.reply as StepMetadata | undefined;
      if (step && reply) {
        data = { conversationId: current.id, inReplyTo: reply.inReplyTo };
        const job = this.job(scope.workspaceId, current.id, reply.inReplyTo, reply.model, undefined);
        await this.closeReply(job, reply.inReplyTo, reply.model, step, reply.step + 1);
      }
      // Storing the closing messages changed the conversation's version: read it again.
      const closed = await this.storage.conversations.get(scope, current.id);
      if (!closed) return [];
      const set: Partial<PausedConversation> = { pendingToolCalls: [], toolAnswers: [] };
      if (
        waiting(closed) === seen &&
        (await this.recordCancelled(scope, data, { set, ifVersion: [recordVersion(closed)] }))
      )
        return [data.inReplyTo];
      if (look === 3)
        throw new ParleyError(
          ErrorCode.conflict,
          `Conversation '${current.id}' kept changing while its reply was cancelled; cancel again.`,
        );
      const more = await this.queue.cancel(scope, current.id);
      stopped.push(...[...more.running, ...more.removed].map((queued) => queued.inReplyTo));
      current = await this.storage.conversations.get(scope, current.id);
    }
    return [];
  }

  /**
   * Ends a cancelled reply whose step `step` asked for tools: each call without a result gets
   * `{"error":"cancelled"}`, then an empty step `next` with `finishReason: "cancelled"` is stored,
   * so the reply is no longer open (`openStep`) and no later request resumes it.
   */
  private async closeReply(
    job: ReplyJob,
    inReplyTo: string | null,
    model: string,
    step: Message,
    next: number,
  ): Promise<void> {
    const context = await this.context({ workspaceId: job.workspaceId }, job.conversationId);
    const answered = new Set(context.filter((message) => message.role === 'tool').map((message) => message.toolCallId));
    for (const call of step.toolCalls ?? [])
      if (!answered.has(call.id)) await this.storeResult(job, call, CANCELLED_RESULT);
    const reply: StepMetadata = {
      inReplyTo,
      model,
      finishReason: 'cancelled',
      usage: { inputTokens: null, outputTokens: null },
      step: next,
    };
    await this.append(
      { workspaceId: job.workspaceId },
      {
        id: this.ids.next('msg'),
        conversationId: job.conversationId,
        content: '',
        role: 'assistant',
        metadata: { reply },
        toolCalls: null,
        toolCallId: null,
        createdAt: new Date(this.clock.now()).toISOString(),
      },
    );
  }

  /**
   * Records `reply.cancelled` with `change` (an event only, or the closing of a paused reply) in one
   * step, then tells the feed. False when `change`'s condition was not met (nothing recorded).
   */
  private async recordCancelled(
    scope: WorkspaceScope,
    data: ReplyCancelled,
    change: { keepVersion: true } | { set: Partial<PausedConversation>; ifVersion: number[] },
  ): Promise<boolean> {
    const result = await this.storage.conversations.update(scope, data.conversationId, {
      ...change,
      event: domainEvent(this.ids, this.clock, scope.workspaceId, 'reply.cancelled', data),
    });
    if (result?.outcome !== 'applied') return false;
    await this.publish(scope, data.conversationId, { type: 'reply.cancelled', data });
    return true;
  }

  /** Forgets the answers of a resumed step (what the API shows stays as it is, no call waits: the version too). */
  private async clearAnswers(scope: WorkspaceScope, conversationId: string): Promise<void> {
    const cleared: Partial<PausedConversation> = { toolAnswers: [] };
    await this.storage.conversations.update(scope, conversationId, { set: cleared, keepVersion: true });
  }

  /** Stores a call's result as a `tool` message (recording `message.sent`). */
  private async storeResult(job: ReplyJob, call: ToolCall, content: string): Promise<void> {
    await this.append(
      { workspaceId: job.workspaceId },
      {
        id: this.ids.next('msg'),
        conversationId: job.conversationId,
        content,
        role: 'tool',
        metadata: { tool: { name: call.name, ...(call.server !== undefined && { server: call.server }) } },
        toolCalls: null,
        toolCallId: call.id,
        createdAt: new Date(this.clock.now()).toISOString(),
      },
    );
  }

  /** Keeps `pending` on the conversation and records `reply.requires_action` in the same step. */
  private async pause(job: ReplyJob, inReplyTo: string | null, pending: PendingToolCall[]): Promise<ReplyOutcome> {
    const data: ReplyRequiresAction = { conversationId: job.conversationId, inReplyTo, toolCalls: pending };
    const set: Partial<PausedConversation> = {
      pendingToolCalls: pending,
      toolAnswers: [],
      pausedTraceContext: activeTraceContext() ?? null,
    };
    const paused = await this.storage.conversations.update({ workspaceId: job.workspaceId }, job.conversationId, {
      set,
      where: [{ field: 'status', equals: 'active' }],
      event: domainEvent(this.ids, this.clock, job.workspaceId, 'reply.requires_action', data),
    });
    if (paused?.outcome !== 'applied') return 'skipped';
    await this.publish({ workspaceId: job.workspaceId }, job.conversationId, { type: 'reply.requires_action', data });
    return 'paused';
  }

  /** Records `reply.failed` (an event with no change: the conversation and its version are left as they are) and tells the feed. */
  private async recordFailure(job: ReplyJob, error: string): Promise<void> {
    const data: ReplyFailed = { conversationId: job.conversationId, inReplyTo: job.inReplyTo, error };
    await this.storage.conversations.update({ workspaceId: job.workspaceId }, job.conversationId, {
      keepVersion: true,
      event: domainEvent(this.ids, this.clock, job.workspaceId, 'reply.failed', data),
    });
    await this.publish({ workspaceId: job.workspaceId }, job.conversationId, {
      type: 'reply.failed',
      inReplyTo: job.inReplyTo,
      error,
    });
  }

  private async append(scope: WorkspaceScope, message: Message, usage?: UsageRecord): Promise<boolean> {
    return (await this.writer.append(scope, message, { usage })) === 'appended';
  }

  private async context(scope: WorkspaceScope, conversationId: string): Promise<Message[]> {
    const page = await this.storage.messages.page(scope, conversationId, { limit: this.options.contextMessages });
    return page?.messages ?? [];
  }

  /** Live signals are best effort: a feed outage never fails a reply (streams re-read storage). */
  private publish(scope: WorkspaceScope, conversationId: string, signal: FeedSignal): Promise<void> {
    return this.writer.signal(scope, conversationId, signal);
  }

  private job(
    workspaceId: string,
    conversationId: string,
    inReplyTo: string | null,
    model: string,
    traceContext: string | undefined,
  ): ReplyJob {
    const requestedAt = this.clock.now();
    const job: ReplyJob = { id: `rpl_${randomUUID()}`, workspaceId, conversationId, inReplyTo, requestedAt, model };
    return traceContext === undefined ? job : { ...job, traceContext };
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
  finishReason: ReplyFinishReason;
  usage: TokenUsage;
  /** 1 for a reply's first model call. */
  step: number;
  /** Set on a step that asked for tools at `maxSteps`: its calls were not made and the reply ended. */
  stepLimitReached?: true;
  /** What the step's prompt held (absent on a step stored without a model call: a cancelled reply's closing step). */
  context?: ReplyContext;
}

/** A stored step that ends its reply: it asked for no tools, or reached the step limit. */
function finalStep(step: Message): boolean {
  return !step.toolCalls?.length || (step.metadata.reply as StepMetadata).stepLimitReached === true;
}

/** What one model call produced. */
/** A string's last UTF-16 unit is a high surrogate (without the `u` flag, a pair's second unit is a low one). */
const HIGH_SURROGATE_AT_END = /[\ud800-\udbff]$/;

interface StepResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: ReplyFinishReason;
  usage: TokenUsage;
  /** The model the provider says answered (`gen_ai.response.model`). */
  responseModel?: string;
  /** What the prompt held. */
  context?: ReplyContext;
}

/** What a cancelled model call stores: the text written so far; the provider said no usage. */
function cancelledStep(text: string): StepResult {
  return { text, toolCalls: [], finishReason: 'cancelled', usage: { inputTokens: null, outputTokens: null } };
}

/**
 * `parts`, ending with `{cancelled}` (what `stopped()` makes) instead of throwing or ending short
 * once `signal` was aborted by a cancel: a model may throw the abort or just stop yielding.
 */
async function* stopOnCancel<T extends object, S>(
  parts: AsyncIterable<T>,
  signal: AbortSignal | undefined,
  stopped: () => S,
): AsyncGenerator<T | { cancelled: S }> {
  try {
    for await (const part of parts) {
      if (wasCancelled(signal)) break;
      yield part;
    }
  } catch (error) {
    if (!wasCancelled(signal)) throw error;
  }
  if (wasCancelled(signal)) yield { cancelled: stopped() };
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

/** `read(id)` of each distinct id, made together; the results by id. */
async function readEach<T>(ids: readonly string[], read: (id: string) => Promise<T>): Promise<Map<string, T>> {
  const distinct = [...new Set(ids)];
  const results = await Promise.all(distinct.map(read));
  return new Map(distinct.map((id, index) => [id, results[index]!]));
}
