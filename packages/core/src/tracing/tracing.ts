/**
 * @module Parley's spans (docs/observability.md#traces): a tracer the host hands in (or the
 * OpenTelemetry API's global one, a no-op without an SDK), whether content may be recorded, and
 * running work inside a span. Nothing here registers anything global.
 */
import { createRequire } from 'node:module';
import {
  SpanStatusCode,
  context,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';

/** The instrumentation scope of Parley's spans: `parley` and the version of `@parley/core`. */
export const TRACER_NAME = 'parley';
const TRACER_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * The environment variable of the OpenTelemetry GenAI conventions that opts in to recording
 * message content, tool arguments and results in spans; anything but `true` leaves them out.
 */
export const CAPTURE_CONTENT_VARIABLE = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

/** How a core traces (`CoreSettings.tracing`). */
export interface TracingSettings {
  /**
   * Where Parley's spans go: a tracer of the host's provider (`provider.getTracer('parley')`), so
   * Parley never needs a global provider. Default `trace.getTracer('parley', version)` of the
   * OpenTelemetry API: the global provider's when the host registered one, else a no-op.
   */
  tracer?: Tracer;
  /**
   * Record message content, the system prompt, tool arguments and results as span attributes
   * (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`,
   * `gen_ai.tool.call.arguments`/`result`). Default: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
   * is `true`. Keys, secrets and header values are never recorded.
   */
  captureContent?: boolean;
}

/** The tracer and content policy of one core; services and workers run their work through {@link inSpan}. */
export class Tracing {
  readonly tracer: Tracer;
  readonly captureContent: boolean;

  constructor(settings: TracingSettings = {}) {
    this.tracer = settings.tracer ?? trace.getTracer(TRACER_NAME, TRACER_VERSION);
    this.captureContent = settings.captureContent ?? process.env[CAPTURE_CONTENT_VARIABLE]?.toLowerCase() === 'true';
  }

  /**
   * Runs `fn` inside a new span `name`, the active span while it runs (so spans of instrumented
   * libraries it calls, and storage writes recording trace contexts, nest under it). Its parent is
   * `parent` when given (a stored trace context, `contextFromTrace`), else the active context.
   * The span ends when `fn` settles; a rejection marks it `ERROR` with `error.type` (the error's
   * name, never its message: it may quote content) and is rethrown.
   */
  async inSpan<T>(
    name: string,
    options: SpanOptions,
    parent: Context | undefined,
    fn: (span: Span) => Promise<T>,
  ): Promise<T> {
    const base = parent ?? context.active();
    const span = this.tracer.startSpan(name, options, base);
    try {
      return await context.with(trace.setSpan(base, span), fn, undefined, span);
    } catch (error) {
      markFailed(span, errorType(error));
      throw error;
    } finally {
      span.end();
    }
  }
}

/** Sets `ERROR` status and `error.type` (a low-cardinality kind, OpenTelemetry's general convention). */
export function markFailed(span: Span, type: string, description?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(description !== undefined && { message: description }) });
}

/** An error's kind: its `name` (`AbortError`, `TypeError`, …), `_OTHER` for a non-error. */
export function errorType(error: unknown): string {
  return error instanceof Error ? error.name : '_OTHER';
}
