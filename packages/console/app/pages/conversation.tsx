/**
 * @module One conversation: its history (the latest page first, older pages by cursor as you
 * scroll up), each role distinct, tool calls and results as collapsible cards, each reply step's
 * usage; the live stream (replies written as they stream, resumed after a dropped connection
 * without duplicates: messages are kept by id); the tool calls a paused reply waits for, with
 * Approve / Reject and a form for client tools; a composer; complete and delete.
 */
import type { Conversation, Message, PendingToolCall } from '@parley/client';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { lacking, problemOf, type Problem, type Session } from '../api.ts';
import { Button, Confirm, ErrorMessage, JsonText, Loading, Time } from '../ui.tsx';

const PAGE = 50;

const ROLE_LABELS: Record<Message['role'], string> = {
  user: 'User',
  assistant: 'Assistant',
  system: 'System',
  tool: 'Tool result',
};

interface Draft {
  inReplyTo: string | null;
  attempt: number;
  text: string;
}

interface ReplyMetadata {
  model?: string;
  finishReason?: string;
  step?: number;
  usage?: { inputTokens: number | null; outputTokens: number | null };
}

const byId = (a: Message, b: Message) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function replyOf(message: Message): ReplyMetadata | undefined {
  const reply = message.metadata.reply;
  return typeof reply === 'object' && reply !== null ? (reply as ReplyMetadata) : undefined;
}

/** The metadata a person or application wrote (`reply` is Parley's own). */
function ownMetadata(message: Message): Record<string, unknown> {
  const { reply: _reply, ...rest } = message.metadata;
  return rest;
}

function MessageItem({ message, toolNames }: { message: Message; toolNames: Map<string, string> }) {
  const reply = replyOf(message);
  const metadata = ownMetadata(message);
  const label = `${ROLE_LABELS[message.role]} message`;
  return (
    <li class={`msg role-${message.role}`} aria-label={label}>
      <div class="msg-head">
        <span class="role">{ROLE_LABELS[message.role]}</span>
        <Time iso={message.createdAt} />
      </div>
      {message.role === 'tool' ? (
        <details class="card">
          <summary>Result of {toolNames.get(message.toolCallId ?? '') ?? 'a tool call'}</summary>
          <pre class="json">{message.content}</pre>
          <p class="muted small mono">{message.toolCallId}</p>
        </details>
      ) : (
        message.content !== '' && <div class="content">{message.content}</div>
      )}
      {message.toolCalls?.map((call) => (
        <details key={call.id} class="card">
          <summary>Tool call {call.name}</summary>
          <JsonText value={call.arguments} label={`Arguments of ${call.name}`} />
          <p class="muted small mono">{call.id}</p>
        </details>
      ))}
      {Object.keys(metadata).length > 0 && (
        <details class="card">
          <summary>Metadata</summary>
          <JsonText value={metadata} />
        </details>
      )}
      {reply && (
        <p class="usage">
          {reply.model}
          {reply.step !== undefined && ` · step ${reply.step}`}
          {reply.finishReason && ` · ${reply.finishReason}`}
          {reply.usage &&
            ` · ${reply.usage.inputTokens ?? '?'} input, ${reply.usage.outputTokens ?? '?'} output tokens`}
        </p>
      )}
    </li>
  );
}

function PendingCall({
  call,
  why,
  onAnswer,
}: {
  call: PendingToolCall;
  why: string | undefined;
  onAnswer: (answer: { approved: boolean; reason?: string } | { output: unknown }) => Promise<void>;
}) {
  const [reason, setReason] = useState('');
  const [output, setOutput] = useState('{}');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const answer = async (value: Parameters<typeof onAnswer>[0]) => {
    setProblem(null);
    setBusy(true);
    try {
      await onAnswer(value);
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="pending">
      <p>
        <strong>{call.name}</strong> ({call.kind} tool{call.requiresApproval ? ', needs approval' : ''}){' '}
        <span class="muted small mono">{call.id}</span>
      </p>
      <JsonText value={call.arguments} label={`Arguments of ${call.name}`} />
      {call.requiresApproval ? (
        <div class="row">
          <Button variant="primary" why={why} disabled={busy} onClick={() => answer({ approved: true })}>
            Approve {call.name}
          </Button>
          <label>
            Reason for rejecting {call.name}
            <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} disabled={why !== undefined} />
          </label>
          <Button
            variant="danger"
            why={why}
            disabled={busy}
            onClick={() => answer({ approved: false, ...(reason.trim() ? { reason: reason.trim() } : {}) })}
          >
            Reject {call.name}
          </Button>
        </div>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            let value: unknown;
            try {
              value = JSON.parse(output);
            } catch (error) {
              setProblem(problemOf(new Error(`The output is not valid JSON: ${(error as Error).message}`)));
              return;
            }
            void answer({ output: value });
          }}
        >
          <label>
            Output of {call.name} (JSON)
            <textarea
              rows={3}
              class="mono"
              value={output}
              onInput={(e) => setOutput(e.currentTarget.value)}
              disabled={why !== undefined}
            />
          </label>
          <Button type="submit" variant="primary" why={why} disabled={busy}>
            Send output of {call.name}
          </Button>
        </form>
      )}
      <ErrorMessage problem={problem} />
    </li>
  );
}

export function ConversationView({ session, conversationId }: { session: Session; conversationId: string }) {
  const { client } = session;
  const [conversation, setConversation] = useState<Conversation | null>(null);
  const [agentName, setAgentName] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<{ cursor: string | undefined; loading: boolean; loaded: boolean }>({
    cursor: undefined,
    loading: false,
    loaded: false,
  });
  const [draft, setDraft] = useState<Draft | null>(null);
  const [pending, setPending] = useState<PendingToolCall[]>([]);
  const [live, setLive] = useState<'connecting' | 'live' | 'ended' | 'stopped'>('connecting');
  const [liveProblem, setLiveProblem] = useState<Problem | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [streamRun, setStreamRun] = useState(0);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [content, setContent] = useState('');
  const [role, setRole] = useState<'user' | 'system' | 'assistant'>('user');
  const [sending, setSending] = useState(false);
  const history = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  /** Set before older messages are added: the distance from the bottom to keep. */
  const keepFromBottom = useRef<number | null>(null);
  const stickToBottom = useRef(true);
  const readOnly = lacking(session, 'conversations:write');

  const merge = (incoming: Message[]) =>
    setMessages((previous) => {
      const all = new Map(previous.map((message) => [message.id, message]));
      for (const message of incoming) all.set(message.id, message);
      return [...all.values()].sort(byId);
    });

  // The conversation, its agent's name and the latest page of history.
  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const [loaded, page] = await Promise.all([
          client.conversations.get(conversationId),
          client.messages.history(conversationId, { limit: PAGE }),
        ]);
        if (!live) return;
        setConversation(loaded);
        setPending(loaded.pendingToolCalls);
        merge(page.messages);
        setOlder({ cursor: page.hasMore ? page.nextCursor : undefined, loading: false, loaded: true });
        client.agents.get(loaded.agentId).then(
          (agent) => live && setAgentName(agent.name),
          () => {},
        );
      } catch (error) {
        if (live) setProblem(problemOf(error));
      }
    })();
    return () => {
      live = false;
    };
  }, [conversationId]);

  // The live stream: messages (kept by id, so a replay or a resumption adds nothing twice), the
  // reply being written, paused replies and the end.
  useEffect(() => {
    const controller = new AbortController();
    setLive('connecting');
    setLiveProblem(null);
    void (async () => {
      try {
        const events = client.conversations.stream(conversationId, { signal: controller.signal });
        setLive('live');
        for await (const event of events) {
          switch (event.type) {
            case 'message':
            case 'tool.result':
              merge([event.data]);
              if (event.data.role === 'assistant') setDraft(null);
              if (event.data.role === 'tool')
                setPending((calls) => calls.filter((call) => call.id !== event.data.toolCallId));
              break;
            case 'message.delta':
              setFailed(null);
              setDraft((current) =>
                current && current.inReplyTo === event.data.inReplyTo && current.attempt === event.data.attempt
                  ? { ...current, text: current.text + event.data.delta }
                  : { inReplyTo: event.data.inReplyTo, attempt: event.data.attempt, text: event.data.delta },
              );
              break;
            case 'reply.failed':
              setDraft(null);
              setFailed(event.data.error);
              break;
            case 'reply.requires_action':
              setPending(event.data.toolCalls);
              break;
            case 'conversation.completed':
              setConversation(event.data);
              setDraft(null);
              break;
            case 'tool.call':
              break;
          }
        }
        if (!controller.signal.aborted) setLive('ended');
      } catch (error) {
        if (controller.signal.aborted) return;
        setLive('stopped');
        setLiveProblem(problemOf(error));
      }
    })();
    return () => controller.abort();
  }, [conversationId, streamRun]);

  const loadOlder = async () => {
    if (!older.cursor || older.loading) return;
    setOlder({ ...older, loading: true });
    try {
      const page = await client.messages.history(conversationId, { limit: PAGE, before: older.cursor });
      const box = history.current;
      if (box) keepFromBottom.current = box.scrollHeight - box.scrollTop;
      merge(page.messages);
      setOlder({ cursor: page.hasMore ? page.nextCursor : undefined, loading: false, loaded: true });
    } catch (error) {
      setOlder({ ...older, loading: false });
      setProblem(problemOf(error));
    }
  };

  // Older messages keep what was on screen in place; new ones scroll into view when at the bottom.
  useLayoutEffect(() => {
    const box = history.current;
    if (!box) return;
    if (keepFromBottom.current !== null) {
      box.scrollTop = box.scrollHeight - keepFromBottom.current;
      keepFromBottom.current = null;
    } else if (stickToBottom.current) {
      box.scrollTop = box.scrollHeight;
    }
  }, [messages, draft]);

  // Scrolling up to the top loads the previous page.
  useEffect(() => {
    const sentinel = top.current;
    const box = history.current;
    if (!sentinel || !box || !older.loaded || !older.cursor) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting) && box.scrollTop < box.scrollHeight - box.clientHeight)
          void loadOlder();
      },
      { root: box },
    );
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [older.cursor, older.loaded, older.loading]);

  const toolNames = new Map<string, string>();
  for (const message of messages) for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.name);

  const act = async (work: () => Promise<void>) => {
    setProblem(null);
    try {
      await work();
    } catch (error) {
      setProblem(problemOf(error));
    }
  };

  const send = async (event: Event) => {
    event.preventDefault();
    setSending(true);
    await act(async () => {
      const sent = await client.messages.send(conversationId, { role, content });
      stickToBottom.current = true;
      merge([sent]);
      setContent('');
    });
    setSending(false);
  };

  const answer = async (call: PendingToolCall, value: { approved: boolean; reason?: string } | { output: unknown }) => {
    const accepted = await client.replies.submitToolResults(conversationId, {
      results: [{ toolCallId: call.id, ...value }],
    });
    setPending(accepted.pendingToolCalls);
  };

  if (!conversation) {
    return (
      <section>
        <p>
          <a href="#/conversations">← Conversations</a>
        </p>
        <h1>Conversation</h1>
        {problem ? <ErrorMessage problem={problem} /> : <Loading what="the conversation" />}
      </section>
    );
  }
  const completed = conversation.status === 'completed';
  const writeWhy = readOnly ?? (completed ? 'The conversation is completed.' : undefined);

  return (
    <section class="conversation">
      <p>
        <a href="#/conversations">← Conversations</a>
      </p>
      <div class="title-row">
        <h1>Conversation with {agentName ?? 'its agent'}</h1>
        <span class={`badge ${conversation.status}`}>{conversation.status}</span>
      </div>
      <p class="muted">
        <span class="mono">{conversation.id}</span> · user {conversation.userId ?? 'none'} · started{' '}
        <Time iso={conversation.createdAt} /> ·{' '}
        <span role="status" class="live">
          {live === 'live'
            ? 'live'
            : live === 'connecting'
              ? 'connecting…'
              : live === 'ended'
                ? 'stream ended'
                : 'offline'}
        </span>
      </p>
      {Object.keys(conversation.metadata).length > 0 && (
        <details class="card">
          <summary>Conversation metadata</summary>
          <JsonText value={conversation.metadata} />
        </details>
      )}
      <div class="row">
        <Button why={writeWhy} onClick={() => act(async () => void (await client.replies.request(conversationId)))}>
          Ask the agent to reply
        </Button>
        <Button
          why={writeWhy}
          onClick={() =>
            act(async () => setConversation(await client.conversations.update(conversationId, { status: 'completed' })))
          }
        >
          Complete conversation
        </Button>
        <Button variant="danger" why={readOnly} onClick={() => setConfirmDelete(true)}>
          Delete conversation
        </Button>
      </div>
      <ErrorMessage problem={problem} />
      {live === 'stopped' && (
        <div class="error" role="alert">
          <p>Live updates stopped.</p>
          <ErrorMessage problem={liveProblem} />
          <Button onClick={() => setStreamRun((n) => n + 1)}>Reconnect</Button>
        </div>
      )}
      <div
        class="history"
        ref={history}
        tabIndex={0}
        role="region"
        aria-label="Message history"
        onScroll={(event) => {
          const box = event.currentTarget;
          stickToBottom.current = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
        }}
      >
        <div ref={top} class="sentinel" />
        {older.cursor && (
          <Button onClick={() => void loadOlder()} disabled={older.loading}>
            {older.loading ? 'Loading older messages…' : 'Load older messages'}
          </Button>
        )}
        {older.loaded && !older.cursor && messages.length > 0 && <p class="muted center">Start of the conversation</p>}
        {older.loaded && messages.length === 0 && !draft && <p class="empty">No messages yet.</p>}
        <ol class="messages" aria-label="Messages">
          {messages.map((message) => (
            <MessageItem key={message.id} message={message} toolNames={toolNames} />
          ))}
          {draft && (
            <li class="msg role-assistant draft" aria-label="Reply being written" aria-busy="true">
              <div class="msg-head">
                <span class="role">Assistant</span>
                <span class="muted">writing…{draft.attempt > 1 ? ` (attempt ${draft.attempt})` : ''}</span>
              </div>
              <div class="content">{draft.text}</div>
            </li>
          )}
        </ol>
        {failed && (
          <p class="error" role="alert">
            The reply failed: {failed}
          </p>
        )}
      </div>
      {pending.length > 0 && (
        <section class="pending-calls" aria-labelledby="pending-title">
          <h2 id="pending-title">Tool calls waiting for an answer</h2>
          <ul>
            {pending.map((call) => (
              <PendingCall key={call.id} call={call} why={readOnly} onAnswer={(value) => answer(call, value)} />
            ))}
          </ul>
        </section>
      )}
      <form class="composer" onSubmit={send}>
        <label class="grow">
          Message
          <textarea
            rows={3}
            value={content}
            disabled={writeWhy !== undefined}
            onInput={(e) => setContent(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) e.currentTarget.form?.requestSubmit();
            }}
          />
        </label>
        <label>
          Role
          <select
            value={role}
            disabled={writeWhy !== undefined}
            onChange={(e) => setRole(e.currentTarget.value as typeof role)}
          >
            <option value="user">user</option>
            <option value="system">system</option>
            <option value="assistant">assistant</option>
          </select>
        </label>
        <Button type="submit" variant="primary" why={writeWhy} disabled={sending || content.trim() === ''}>
          Send
        </Button>
      </form>
      <Confirm
        open={confirmDelete}
        title="Delete this conversation?"
        confirm="Delete conversation"
        onCancel={() => setConfirmDelete(false)}
        onConfirm={() => {
          setConfirmDelete(false);
          void act(async () => {
            await client.conversations.delete(conversationId);
            window.location.hash = '#/conversations';
          });
        }}
      >
        <p>Its messages are deleted with it. This cannot be undone.</p>
      </Confirm>
    </section>
  );
}
