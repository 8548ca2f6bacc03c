/**
 * @module Token usage: input and output tokens per day, agent, model or user over a range of UTC
 * days, as a bar chart (SVG, drawn here: no chart library) and a table.
 */
import type { UsageReport } from '@parley/client';
import { useState } from 'preact/hooks';
import { lacking, problemOf, type Session } from '../api.ts';
import type { Route } from '../app.tsx';
import { Empty, ErrorMessage, Loading, href, useLoad } from '../ui.tsx';

type GroupBy = UsageReport['groupBy'];
const GROUPS: Array<{ value: GroupBy; label: string }> = [
  { value: 'day', label: 'Day' },
  { value: 'agent', label: 'Agent' },
  { value: 'model', label: 'Model' },
  { value: 'user', label: 'User' },
];

const day = (date: Date) => date.toISOString().slice(0, 10);

function Chart({ report, names }: { report: UsageReport; names: (key: string | null) => string }) {
  const rows = report.totals;
  const max = Math.max(1, ...rows.map((row) => row.inputTokens + row.outputTokens));
  const bar = 28;
  const gap = 10;
  const labelWidth = 170;
  const width = 720;
  const height = rows.length * (bar + gap) + 30;
  const scale = (value: number) => (value / max) * (width - labelWidth - 20);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Input and output tokens per ${report.groupBy}, ${report.from} to ${report.to}`}
      >
        {rows.map((row, index) => {
          const y = index * (bar + gap);
          const input = scale(row.inputTokens);
          const output = scale(row.outputTokens);
          const name = names(row.key);
          return (
            <g key={row.key ?? 'none'}>
              <text x={labelWidth - 8} y={y + bar / 2 + 5} text-anchor="end" class="chart-label">
                {name.length > 22 ? `${name.slice(0, 21)}…` : name}
              </text>
              <rect x={labelWidth} y={y} width={input} height={bar} class="bar-input" />
              <rect x={labelWidth + input} y={y} width={output} height={bar} class="bar-output" />
            </g>
          );
        })}
        <g transform={`translate(${labelWidth}, ${height - 12})`}>
          <rect width="12" height="12" y="-10" class="bar-input" />
          <text x="18" class="chart-label">
            input
          </text>
          <rect x="80" width="12" height="12" y="-10" class="bar-output" />
          <text x="98" class="chart-label">
            output
          </text>
        </g>
      </svg>
      <figcaption class="muted">Tokens per {report.groupBy}: input (dark) and output (light).</figcaption>
    </figure>
  );
}

export function Usage({ session, route }: { session: Session; route: Route }) {
  const today = new Date();
  const from = route.query.get('from') ?? day(new Date(today.getTime() - 29 * 86_400_000));
  const to = route.query.get('to') ?? day(today);
  const groupBy = (route.query.get('groupBy') as GroupBy | null) ?? 'day';
  const [fromInput, setFrom] = useState(from);
  const [toInput, setTo] = useState(to);
  const why = lacking(session, 'agents:read');
  const report = useLoad(
    () => (why ? Promise.resolve(null) : session.client.usage({ from, to, groupBy })),
    [from, to, groupBy],
  );
  const agents = useLoad(
    () => (why || groupBy !== 'agent' ? Promise.resolve(null) : session.client.agents.list({ limit: 100 })),
    [groupBy],
  );
  const names = (key: string | null) =>
    key === null
      ? groupBy === 'user'
        ? 'no user'
        : 'none'
      : ((groupBy === 'agent' ? agents.data?.agents.find((agent) => agent.id === key)?.name : undefined) ?? key);
  const go = (change: Record<string, string>) =>
    (window.location.hash = href('/usage', { from, to, groupBy, ...change }));
  return (
    <section>
      <h1>Usage</h1>
      {why ? (
        <p class="empty">{why}</p>
      ) : (
        <>
          <form
            class="filters"
            aria-label="Usage range"
            onSubmit={(e) => (e.preventDefault(), go({ from: fromInput, to: toInput }))}
          >
            <label>
              From (UTC day)
              <input type="date" value={fromInput} onInput={(e) => setFrom(e.currentTarget.value)} />
            </label>
            <label>
              To (UTC day)
              <input type="date" value={toInput} onInput={(e) => setTo(e.currentTarget.value)} />
            </label>
            <label>
              Group by
              <select value={groupBy} onChange={(e) => go({ groupBy: e.currentTarget.value })}>
                {GROUPS.map((group) => (
                  <option key={group.value} value={group.value}>
                    {group.label}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" class="button">
              Show
            </button>
          </form>
          {report.loading && !report.data && <Loading what="usage" />}
          <ErrorMessage problem={report.problem ? problemOf(report.problem) : null} />
          {report.data && report.data.totals.length === 0 && <Empty>No tokens used in this range.</Empty>}
          {report.data && report.data.totals.length > 0 && (
            <>
              <Chart report={report.data} names={names} />
              <div class="scroll" role="region" aria-label="Usage table" tabIndex={0}>
                <table class="table">
                  <thead>
                    <tr>
                      <th scope="col">{GROUPS.find((group) => group.value === groupBy)?.label}</th>
                      <th scope="col">Input tokens</th>
                      <th scope="col">Output tokens</th>
                      <th scope="col">Reply steps</th>
                    </tr>
                  </thead>
                  <tbody>
                    {report.data.totals.map((row) => (
                      <tr key={row.key ?? 'none'}>
                        <td>{names(row.key)}</td>
                        <td>{row.inputTokens}</td>
                        <td>{row.outputTokens}</td>
                        <td>{row.replies}</td>
                      </tr>
                    ))}
                  </tbody>
                  <tfoot>
                    <tr>
                      <th scope="row">Total</th>
                      <td>{report.data.inputTokens}</td>
                      <td>{report.data.outputTokens}</td>
                      <td>{report.data.replies}</td>
                    </tr>
                  </tfoot>
                </table>
              </div>
            </>
          )}
        </>
      )}
    </section>
  );
}
