/**
 * @module The W3C Trace Context stored with queued work (docs/observability.md#traces): a reply
 * job, a delivery job and an outbox entry keep the context they were made in, so the worker that
 * takes them — in another process too — continues the request's trace.
 */
import {
  ROOT_CONTEXT,
  context,
  createTraceState,
  isSpanContextValid,
  trace,
  type Context,
  type SpanContext,
} from '@opentelemetry/api';
import type { WorkspaceScope } from '../ports/scope.js';

/** `traceparent` version 00 (W3C Trace Context Level 1): version, trace id, parent id, flags. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A span context as stored: its W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), then, when
 * it has one, a space and its `tracestate` (serialized: `key=value,key=value`, no spaces). At most
 * 55 + 1 + 512 characters. Holds no content, only ids and vendor trace state.
 */
export function formatTraceContext(span: SpanContext): string {
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
  const tracestate = span.traceState?.serialize() ?? '';
  return tracestate === '' ? traceparent : `${traceparent} ${tracestate}`;
}

/**
 * The stored form ({@link formatTraceContext}) of the span active in `ctx` (default the
 * OpenTelemetry API's active context), or `undefined` when there is none or it is invalid — always
 * so without an OpenTelemetry SDK.
 */
export function activeTraceContext(ctx: Context = context.active()): string | undefined {
  const span = trace.getSpanContext(ctx);
  return span && isSpanContextValid(span) ? formatTraceContext(span) : undefined;
}

/**
 * The trace context a storage write in `scope` records with its event's outbox entry:
 * `scope.traceContext` when the caller gave one, else the active span's ({@link activeTraceContext}).
 */
export function traceContextOf(scope: WorkspaceScope): string | undefined {
  return scope.traceContext ?? activeTraceContext();
}

/**
 * A context whose (remote) parent is the stored span context `stored`, on `base` (default the root
 * context, so nothing active at the caller leaks in); `undefined` when `stored` is absent or not a
 * valid `traceparent` (a record written by an older or foreign writer is traced afresh).
 */
export function contextFromTrace(stored: string | null | undefined, base: Context = ROOT_CONTEXT): Context | undefined {
  const span = parseTraceContext(stored);
  return span && trace.setSpanContext(base, span);
}

/** The span context of a stored trace context, marked remote; `undefined` when it is malformed. */
export function parseTraceContext(stored: string | null | undefined): SpanContext | undefined {
  if (!stored) return undefined;
  const space = stored.indexOf(' ');
  const traceparent = space < 0 ? stored : stored.slice(0, space);
  const match = TRACEPARENT.exec(traceparent);
  // Version ff is invalid; version 00 has nothing after the flags (later versions may, W3C §3.2.4).
  if (!match || match[1] === 'ff' || (match[1] === '00' && match[5] !== undefined)) return undefined;
  const span: SpanContext = {
    traceId: match[2]!,
    spanId: match[3]!,
    traceFlags: Number.parseInt(match[4]!, 16),
    isRemote: true,
  };
  if (space >= 0) span.traceState = createTraceState(stored.slice(space + 1));
  return isSpanContextValid(span) ? span : undefined;
}
