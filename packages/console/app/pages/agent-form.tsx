/**
 * @module Create or edit an agent: every field — name, description, model, system prompt,
 * temperature, max tokens, max steps, auto-reply, `configuration` as JSON, and its tools (each
 * with its JSON Schema). A tools secret Parley generates is shown once.
 */
import type { Agent, AgentCreate, Tool } from '@parley/client';
import { useEffect, useState } from 'preact/hooks';
import { agentModels, lacking, problemOf, type Problem, type Session } from '../api.ts';
import { Button, ErrorMessage, Loading, ShownOnce } from '../ui.tsx';

interface ToolDraft {
  name: string;
  description: string;
  kind: 'webhook' | 'client';
  url: string;
  requiresApproval: boolean;
  timeoutMs: string;
  parameters: string;
}

interface Draft {
  name: string;
  description: string;
  model: string;
  systemPrompt: string;
  temperature: string;
  maxTokens: string;
  maxSteps: string;
  autoReply: boolean;
  configuration: string;
  tools: ToolDraft[];
}

const EMPTY_PARAMETERS = '{\n  "type": "object",\n  "properties": {}\n}';

function draftOf(agent: Agent | undefined): Draft {
  return {
    name: agent?.name ?? '',
    description: agent?.description ?? '',
    model: agent?.model ?? '',
    systemPrompt: agent?.systemPrompt ?? '',
    temperature: agent?.temperature == null ? '' : String(agent.temperature),
    maxTokens: agent?.maxTokens == null ? '' : String(agent.maxTokens),
    maxSteps: String(agent?.maxSteps ?? 8),
    autoReply: agent?.autoReply ?? true,
    configuration: JSON.stringify(agent?.configuration ?? {}, null, 2),
    tools: (agent?.tools ?? []).map((tool) => ({
      name: tool.name,
      description: tool.description,
      kind: tool.kind,
      url: tool.url ?? '',
      requiresApproval: tool.requiresApproval ?? false,
      timeoutMs: tool.timeoutMs === undefined ? '' : String(tool.timeoutMs),
      parameters: JSON.stringify(tool.parameters, null, 2),
    })),
  };
}

/** Parses JSON typed into a field, naming the field when it is not JSON. */
function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${field} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A number field: `null` when empty (the setting is unset), else the number. */
function numberOrNull(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

function toolOf(draft: ToolDraft, index: number): Tool {
  return {
    name: draft.name,
    description: draft.description,
    kind: draft.kind,
    parameters: parseJson(draft.parameters, `Tool ${index + 1} parameters`) as Record<string, unknown>,
    ...(draft.kind === 'webhook' ? { url: draft.url } : {}),
    ...(draft.requiresApproval ? { requiresApproval: true } : {}),
    ...(draft.kind === 'webhook' && draft.timeoutMs.trim() !== '' ? { timeoutMs: Number(draft.timeoutMs) } : {}),
  };
}

export function AgentForm({ session, agentId }: { session: Session; agentId?: string }) {
  const [agent, setAgent] = useState<Agent | undefined>();
  const [draft, setDraft] = useState<Draft | null>(agentId ? null : draftOf(undefined));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const readOnly = lacking(session, 'agents:write');

  useEffect(() => {
    void agentModels().then(setModels);
    if (!agentId) return;
    session.client.agents.get(agentId).then(
      (loaded) => {
        setAgent(loaded);
        setDraft(draftOf(loaded));
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  }, [agentId]);

  if (!draft) {
    return (
      <section>
        <h1>Agent</h1>
        {problem ? <ErrorMessage problem={problem} /> : <Loading what="the agent" />}
      </section>
    );
  }

  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => setDraft({ ...draft, [field]: value });
  const setTool = (index: number, change: Partial<ToolDraft>) =>
    set(
      'tools',
      draft.tools.map((tool, i) => (i === index ? { ...tool, ...change } : tool)),
    );

  const save = async (event: Event) => {
    event.preventDefault();
    setProblem(null);
    setSaved(null);
    setBusy(true);
    try {
      const body = {
        name: draft.name,
        description: draft.description,
        model: draft.model,
        systemPrompt: draft.systemPrompt === '' ? null : draft.systemPrompt,
        temperature: numberOrNull(draft.temperature),
        maxTokens: numberOrNull(draft.maxTokens),
        maxSteps: Number(draft.maxSteps),
        autoReply: draft.autoReply,
        configuration: parseJson(draft.configuration, 'Configuration') as Record<string, unknown>,
        tools: draft.tools.map(toolOf),
      };
      if (agent) {
        const updated = await session.client.agents.update(agent.id, body);
        setAgent(updated);
        setDraft(draftOf(updated));
        if (updated.toolsSecret) setSecret(updated.toolsSecret);
        setSaved('Saved.');
      } else {
        // Create takes no nulls: unset settings are left out.
        const create = Object.fromEntries(
          Object.entries(body).filter(([, value]) => value !== null),
        ) as unknown as AgentCreate;
        const created = await session.client.agents.create(create);
        setAgent(created);
        setDraft(draftOf(created));
        if (created.toolsSecret) setSecret(created.toolsSecret);
        setSaved(`Created ${created.name}.`);
        window.history.replaceState(null, '', `#/agents/${encodeURIComponent(created.id)}`);
      }
    } catch (error) {
      setProblem(problemOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <p>
        <a href="#/agents">← Agents</a>
      </p>
      <h1>{agent ? `Agent ${agent.name}` : 'New agent'}</h1>
      {agent && (
        <p class="muted">
          <span class="mono">{agent.id}</span> · <span class={`badge ${agent.status}`}>{agent.status}</span> ·{' '}
          <a href={`#/conversations?agentId=${encodeURIComponent(agent.id)}`}>Its conversations</a>
        </p>
      )}
      {secret && <ShownOnce label="Tools secret" value={secret} onDone={() => setSecret(null)} />}
      <form class="form" onSubmit={save}>
        <fieldset disabled={readOnly !== undefined}>
          <legend>Settings</legend>
          <label>
            Name
            <input required value={draft.name} onInput={(e) => set('name', e.currentTarget.value)} />
          </label>
          <label>
            Description
            <input value={draft.description} onInput={(e) => set('description', e.currentTarget.value)} />
          </label>
          <label>
            Model
            <input
              required
              list="agent-models"
              value={draft.model}
              onInput={(e) => set('model', e.currentTarget.value)}
            />
          </label>
          <datalist id="agent-models">
            {models.map((model) => (
              <option key={model} value={model} />
            ))}
          </datalist>
          <label>
            System prompt
            <textarea rows={4} value={draft.systemPrompt} onInput={(e) => set('systemPrompt', e.currentTarget.value)} />
          </label>
          <div class="row">
            <label>
              Temperature
              <input
                type="number"
                step="0.1"
                min="0"
                max="2"
                value={draft.temperature}
                onInput={(e) => set('temperature', e.currentTarget.value)}
              />
            </label>
            <label>
              Max tokens
              <input
                type="number"
                min="1"
                value={draft.maxTokens}
                onInput={(e) => set('maxTokens', e.currentTarget.value)}
              />
            </label>
            <label>
              Max steps
              <input
                type="number"
                min="1"
                max="32"
                value={draft.maxSteps}
                onInput={(e) => set('maxSteps', e.currentTarget.value)}
              />
            </label>
          </div>
          <label class="check">
            <input
              type="checkbox"
              checked={draft.autoReply}
              onChange={(e) => set('autoReply', e.currentTarget.checked)}
            />
            Reply automatically to user messages
          </label>
          <label>
            Configuration (JSON)
            <textarea
              rows={4}
              class="mono"
              value={draft.configuration}
              onInput={(e) => set('configuration', e.currentTarget.value)}
            />
          </label>
        </fieldset>
        <fieldset disabled={readOnly !== undefined}>
          <legend>Tools</legend>
          {draft.tools.length === 0 && <p class="muted">No tools.</p>}
          {draft.tools.map((tool, index) => {
            const n = index + 1;
            return (
              <fieldset key={index} class="tool">
                <legend>Tool {n}</legend>
                <div class="row">
                  <label>
                    Tool {n} name
                    <input
                      required
                      value={tool.name}
                      onInput={(e) => setTool(index, { name: e.currentTarget.value })}
                    />
                  </label>
                  <label>
                    Tool {n} kind
                    <select
                      value={tool.kind}
                      onChange={(e) => setTool(index, { kind: e.currentTarget.value as ToolDraft['kind'] })}
                    >
                      <option value="webhook">webhook (Parley calls a URL)</option>
                      <option value="client">client (your application runs it)</option>
                    </select>
                  </label>
                </div>
                <label>
                  Tool {n} description
                  <input
                    value={tool.description}
                    onInput={(e) => setTool(index, { description: e.currentTarget.value })}
                  />
                </label>
                {tool.kind === 'webhook' && (
                  <div class="row">
                    <label class="grow">
                      Tool {n} URL
                      <input
                        type="url"
                        value={tool.url}
                        onInput={(e) => setTool(index, { url: e.currentTarget.value })}
                      />
                    </label>
                    <label>
                      Tool {n} timeout (ms)
                      <input
                        type="number"
                        min="1"
                        max="60000"
                        value={tool.timeoutMs}
                        onInput={(e) => setTool(index, { timeoutMs: e.currentTarget.value })}
                      />
                    </label>
                  </div>
                )}
                <label class="check">
                  <input
                    type="checkbox"
                    checked={tool.requiresApproval}
                    onChange={(e) => setTool(index, { requiresApproval: e.currentTarget.checked })}
                  />
                  Tool {n} requires approval
                </label>
                <label>
                  Tool {n} parameters (JSON Schema)
                  <textarea
                    rows={6}
                    class="mono"
                    value={tool.parameters}
                    onInput={(e) => setTool(index, { parameters: e.currentTarget.value })}
                  />
                </label>
                <Button
                  onClick={() =>
                    set(
                      'tools',
                      draft.tools.filter((_, i) => i !== index),
                    )
                  }
                >
                  Remove tool {n}
                </Button>
              </fieldset>
            );
          })}
          <Button
            onClick={() =>
              set('tools', [
                ...draft.tools,
                {
                  name: '',
                  description: '',
                  kind: 'webhook',
                  url: '',
                  requiresApproval: false,
                  timeoutMs: '',
                  parameters: EMPTY_PARAMETERS,
                },
              ])
            }
          >
            Add tool
          </Button>
        </fieldset>
        <ErrorMessage problem={problem} />
        {saved && (
          <p class="ok" role="status">
            {saved}
          </p>
        )}
        <Button type="submit" variant="primary" why={readOnly} disabled={busy}>
          {agent ? 'Save agent' : 'Create agent'}
        </Button>
      </form>
    </section>
  );
}
