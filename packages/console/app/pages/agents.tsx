/** @module Agents: the page-numbered list with its status filter; activate, deactivate and delete. */
import type { Agent } from '@parley/client';
import { useState } from 'preact/hooks';
import { lacking, problemOf, type Problem, type Session } from '../api.ts';
import type { Route } from '../app.tsx';
import { Button, Confirm, Empty, ErrorMessage, Loading, Pager, Time, href, useLoad } from '../ui.tsx';

const LIMIT = 20;

export function Agents({ session, route }: { session: Session; route: Route }) {
  const page = Math.max(1, Number(route.query.get('page') ?? 1) || 1);
  const status = route.query.get('status') ?? '';
  const list = useLoad(
    () =>
      session.client.agents.list({
        page,
        limit: LIMIT,
        ...(status === 'active' || status === 'inactive' ? { status } : {}),
      }),
    [page, status],
  );
  const [problem, setProblem] = useState<Problem | null>(null);
  const [deleting, setDeleting] = useState<Agent | null>(null);
  const readOnly = lacking(session, 'agents:write');

  const act = async (work: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await work();
      list.reload();
    } catch (error) {
      setProblem(problemOf(error));
    }
  };

  return (
    <section>
      <div class="title-row">
        <h1>Agents</h1>
        <Button variant="primary" why={readOnly} onClick={() => (window.location.hash = '#/agents/new')}>
          New agent
        </Button>
      </div>
      <div class="filters">
        <label>
          Status
          <select
            value={status}
            onChange={(event) => (window.location.hash = href('/agents', { status: event.currentTarget.value }))}
          >
            <option value="">All</option>
            <option value="active">Active</option>
            <option value="inactive">Inactive</option>
          </select>
        </label>
      </div>
      <ErrorMessage problem={problem} />
      {list.loading && !list.data && <Loading what="agents" />}
      <ErrorMessage problem={list.problem ? problemOf(list.problem) : null} />
      {list.data && list.data.agents.length === 0 && (
        <Empty>{status ? `No ${status} agents.` : 'No agents yet. Create one to start conversations with it.'}</Empty>
      )}
      {list.data && list.data.agents.length > 0 && (
        <div class="scroll" role="region" aria-label="Agents table" tabIndex={0}>
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Model</th>
                <th scope="col">Status</th>
                <th scope="col">Tools</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.agents.map((agent) => (
                <tr key={agent.id}>
                  <td>
                    <a href={`#/agents/${encodeURIComponent(agent.id)}`}>{agent.name}</a>
                    <div class="muted small">{agent.description}</div>
                  </td>
                  <td class="mono">{agent.model}</td>
                  <td>
                    <span class={`badge ${agent.status}`}>{agent.status}</span>
                  </td>
                  <td>{agent.tools.length}</td>
                  <td>
                    <Time iso={agent.updatedAt} />
                  </td>
                  <td class="actions">
                    <a href={href('/conversations', { agentId: agent.id })}>Conversations</a>
                    <Button
                      why={readOnly}
                      aria-label={`${agent.status === 'active' ? 'Deactivate' : 'Activate'} ${agent.name}`}
                      onClick={() =>
                        act(() =>
                          session.client.agents.update(agent.id, {
                            status: agent.status === 'active' ? 'inactive' : 'active',
                          }),
                        )
                      }
                    >
                      {agent.status === 'active' ? 'Deactivate' : 'Activate'}
                    </Button>
                    <Button
                      variant="danger"
                      why={readOnly}
                      aria-label={`Delete ${agent.name}`}
                      onClick={() => setDeleting(agent)}
                    >
                      Delete
                    </Button>
                  </td>
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
          label="Agent pages"
          onPage={(p) => (window.location.hash = href('/agents', { status, page: p }))}
        />
      )}
      <Confirm
        open={deleting !== null}
        title={`Delete the agent ${deleting?.name ?? ''}?`}
        confirm="Delete agent"
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          const agent = deleting!;
          setDeleting(null);
          void act(() => session.client.agents.delete(agent.id));
        }}
      >
        <p>Its conversations and their messages are deleted with it. This cannot be undone.</p>
      </Confirm>
    </section>
  );
}
