/**
 * @module Test helper: one trace as a waterfall page (what a tracing UI such as Jaeger shows: each
 * span a row, indented under its parent, its bar placed on the trace's time line), for the picture
 * docs/observability.md shows. Not built.
 */
import type { ReceivedSpan } from './otlp-receiver.js';

const escape = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** The spans of one trace, parents before children, each with its depth. */
export function traceTree(trace: readonly ReceivedSpan[]): Array<{ span: ReceivedSpan; depth: number }> {
  const rows: Array<{ span: ReceivedSpan; depth: number }> = [];
  const visit = (span: ReceivedSpan, depth: number) => {
    rows.push({ span, depth });
    const children = trace.filter((other) => other.parentSpanId === span.spanId);
    for (const child of children.sort((a, b) => a.startMs - b.startMs)) visit(child, depth + 1);
  };
  const roots = trace.filter((span) => !trace.some((other) => other.spanId === span.parentSpanId));
  for (const root of roots.sort((a, b) => a.startMs - b.startMs)) visit(root, 0);
  return rows;
}

/** A self-contained HTML page (no script) drawing `trace`; `processOf` names where each span ran. */
export function traceWaterfall(trace: readonly ReceivedSpan[], processOf: (span: ReceivedSpan) => string): string {
  const start = Math.min(...trace.map((span) => span.startMs));
  const end = Math.max(...trace.map((span) => span.endMs));
  const width = Math.max(end - start, 1);
  const rows = traceTree(trace)
    .map(({ span, depth }) => {
      const left = ((span.startMs - start) / width) * 100;
      const length = Math.max(((span.endMs - span.startMs) / width) * 100, 0.3);
      const process = processOf(span);
      return `<tr><td style="padding-left:${depth * 16 + 6}px">${escape(span.name)}</td>
<td class="process">${escape(process)}</td>
<td class="line"><div class="bar ${process === 'worker' ? 'worker' : 'serve'}" style="left:${left.toFixed(2)}%;width:${length.toFixed(2)}%"></div></td>
<td class="duration">${(span.endMs - span.startMs).toFixed(1)} ms</td></tr>`;
    })
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>One reply's trace</title><style>
body{font:13px system-ui,sans-serif;margin:16px;color:#1f2328}
h1{font-size:15px;margin:0 0 10px}
table{border-collapse:collapse;width:100%}
td{padding:3px 6px;border-bottom:1px solid #eaeef2;white-space:nowrap}
.process{color:#57606a;width:60px}.duration{text-align:right;width:70px;color:#57606a}
.line{position:relative;width:55%}
.bar{position:absolute;top:5px;height:12px;border-radius:2px}
.serve{background:#0969da}.worker{background:#bf8700}
</style></head><body><h1>One reply's trace: ${trace.length} spans, ${width.toFixed(0)} ms (blue: parley serve, amber: parley worker)</h1>
<table>${rows}</table></body></html>`;
}
