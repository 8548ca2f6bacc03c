/** @module The stored W3C trace context: written from a span context, read back as a remote parent, malformed ones refused. */
import { createTraceState, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  activeTraceContext,
  contextFromTrace,
  formatTraceContext,
  parseTraceContext,
  traceContextOf,
} from './trace-context.js';

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = '00f067aa0ba902b7';

describe('stored trace context', () => {
  it('is the traceparent, then the tracestate after a space, and reads back as a remote parent', () => {
    const span = {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
      traceState: createTraceState('congo=t61rcWkgMzE, rojo=00f067aa0ba902b7'),
    };
    const stored = formatTraceContext(span);
    expect(stored).toBe(`00-${traceId}-${spanId}-01 congo=t61rcWkgMzE,rojo=00f067aa0ba902b7`);
    const parent = trace.getSpanContext(contextFromTrace(stored)!);
    expect(parent).toMatchObject({ traceId, spanId, traceFlags: 1, isRemote: true });
    expect(parent!.traceState!.get('rojo')).toBe('00f067aa0ba902b7');
    expect(formatTraceContext({ traceId, spanId, traceFlags: TraceFlags.NONE })).toBe(`00-${traceId}-${spanId}-00`);
  });

  it('refuses what is not a valid traceparent', () => {
    for (const bad of [
      '',
      'garbage',
      `ff-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId}-${spanId}-01-extra`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
    ])
      expect(parseTraceContext(bad), bad).toBeUndefined();
    expect(contextFromTrace(undefined)).toBeUndefined();
    // A later version may carry more fields after the flags.
    expect(parseTraceContext(`01-${traceId}-${spanId}-01-more`)).toMatchObject({ traceId, spanId });
  });

  it('is absent with no active span (no SDK), and a scope names its own', () => {
    expect(activeTraceContext()).toBeUndefined();
    expect(activeTraceContext(ROOT_CONTEXT)).toBeUndefined();
    const stored = `00-${traceId}-${spanId}-01`;
    expect(activeTraceContext(contextFromTrace(stored))).toBe(stored);
    expect(traceContextOf({ workspaceId: 'ws1', traceContext: stored })).toBe(stored);
    expect(traceContextOf({ workspaceId: 'ws1' })).toBeUndefined();
  });
});
