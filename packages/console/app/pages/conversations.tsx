/** @module Conversations: the page-numbered list by agent, user and status, and starting a new one. */
import { useState } from 'preact/hooks';
import { lacking, problemOf, type Problem, type Session } from '../api.ts';
import type { Route } from '../app.tsx';
import { Button, Empty, ErrorMessage, Loading, Pager, Time, href, useLoad } from '../ui.tsx';

const LIMIT = 20;

export function Conversations({ session, route }: { session: Session; route: Route }) {
  const page = Math.max(1, Number(route.query.get('page') ?? 1) || 1);
  const agentId = route.query.get('agentId') ?? '';
  const userId = route.query.get('userId') ?? '';
  const status = route.query.get('status') ?? '';
  const agents = useLoad(() => session.client.agents.list({ limit: 100 }), []);
  const list = useLoad(
    () =>
      session.client.conversations.list({
        page,
        limit: LIMIT,
        ...(agentId ? { agentId } : {}),
        ...(userId ? { userId } : {}),
        ...(status === 'active' || status === 'completed' ? { status } : {}),
      }),
    [page, agentId, userId, status],
  );
  const [userFilter, setUserFilter] = useState(userId);
  const [newAgent, setNewAgent] = useState(agentId);
  const [newUser, setNewUser] = useState('');
  const [newMetadata, setNewMetadata] = useState('{}');
  const [problem, setProblem] = useState<Problem | null>(null);
  const readOnly = lacking(session, 'conversations:write');
  const nameOf = (id: string) => agents.data?.agents.find((agent) => agent.id === id)?.name ?? id;
  const go = (change: Record<string, string>) =>
    (window.location.hash = href('/conversations', { agentId, userId, status, ...change }));

  const start = async (event: Event) => {
    event.preventDefault();
    setProblem(null);
    try {
      let metadata: Record<string, unknown>;
      try {
        metadata = JSON.parse(newMetadata) as Record<string, unknown>;
      } catch (error) {
        throw new Error(`Metadata is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const conversation = await session.client.conversations.create({
        agentId: newAgent,
        ...(newUser.trim() ? { userId: newUser.trim() } : {}),
        metadata,
      });
      window.location.hash = `#/conversations/${encodeURIComponent(conversation.id)}`;
    } catch (error) {
      setProblem(problemOf(error));
    }
  };

  return (
    <section>
      <h1>Conversations</h1>
      <form
        class="filters"
        aria-label="Filter conversations"
        onSubmit={(e) => (e.preventDefault(), go({ userId: userFilter }))}
      >
        <label>
          Agent
          <select value={agentId} onChange={(e) => go({ agentId: e.currentTarget.value })}>
            <option value="">All agents</option>
            {agents.data?.agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          User id
          <input value={userFilter} onInput={(e) => setUserFilter(e.currentTarget.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => go({ status: e.currentTarget.value })}>
            <option value="">All</option>
            <option value="active">Active</option>
            <option value="completed">Completed</option>
          </select>
        </label>
        <button type="submit" class="button">
          Filter
        </button>
      </form>
      {list.loading && !list.data && <Loading what="conversations" />}
      <ErrorMessage problem={list.problem ? problemOf(list.problem) : null} />
      {list.data && list.data.conversations.length === 0 && <Empty>No conversations match.</Empty>}
      {list.data && list.data.conversations.length > 0 && (
        <div class="scroll" role="region" aria-label="Conversations table" tabIndex={0}>
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Conversation</th>
                <th scope="col">Agent</th>
                <th scope="col">User</th>
                <th scope="col">Status</th>
                <th scope="col">Last message</th>
                <th scope="col">Waiting tool calls</th>
              </tr>
            </thead>
            <tbody>
              {list.data.conversations.map((conversation) => (
                <tr key={conversation.id}>
                  <td>
                    <a class="mono" href={`#/conversations/${encodeURIComponent(conversation.id)}`}>
                      {conversation.id}
                    </a>
                  </td>
                  <td>{nameOf(conversation.agentId)}</td>
                  <td>{conversation.userId ?? <span class="muted">none</span>}</td>
                  <td>
                    <span class={`badge ${conversation.status}`}>{conversation.status}</span>
                  </td>
                  <td>
                    <Time iso={conversation.lastMessageAt} />
                  </td>
                  <td>{conversation.pendingToolCalls.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && (
        <Pager
          page={page}
          limit={LIMIT}
          total={list.data.total}
          label="Conversation pages"
          onPage={(p) => go({ page: String(p) })}
        />
      )}
      <h2>Start a conversation</h2>
      <form class="form" onSubmit={start}>
        <fieldset disabled={readOnly !== undefined}>
          <legend class="visually-hidden">New conversation</legend>
          <div class="row">
            <label>
              Agent of the new conversation
              <select required value={newAgent} onChange={(e) => setNewAgent(e.currentTarget.value)}>
                <option value="">Choose an agent</option>
                {agents.data?.agents.map((agent) => (
                  <option key={agent.id} value={agent.id}>
                    {agent.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              User id of the new conversation
              <input value={newUser} onInput={(e) => setNewUser(e.currentTarget.value)} />
            </label>
          </div>
          <label>
            Metadata (JSON)
            <textarea
              rows={3}
              class="mono"
              value={newMetadata}
              onInput={(e) => setNewMetadata(e.currentTarget.value)}
            />
          </label>
        </fieldset>
        <ErrorMessage problem={problem} />
        <Button type="submit" variant="primary" why={readOnly}>
          Start conversation
        </Button>
      </form>
    </section>
  );
}
