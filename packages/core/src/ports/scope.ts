/** @module The scope every service and storage call takes first: whose data, and what the request hands to storage. */
import type { Admission } from '../rate-limit/admission.js';

/**
 * What a call acts for: `workspaceId`, the tenant every read and write is confined to, and, on a
 * request whose rate limit is not decided yet, `admission`, that decision (docs/rate-limits.md#one-round-trip).
 *
 * Services pass the scope on unread. The core built by `createCore` decides a pending admission
 * before any storage call or host-name resolution made with the scope, except in the calls the
 * bundle's storage declares it decides itself in their own atomic step ({@link Storage.decidesRateLimits}),
 * which take it. So nothing a request writes or resolves can happen before its rate limit admits it.
 * Callers outside a request (workers, scripts) pass `{ workspaceId }`.
 */
export interface WorkspaceScope {
  readonly workspaceId: string;
  readonly admission?: Admission;
  /**
   * The W3C trace context a write's event is recorded in (`traceparent`, then a space and the
   * `tracestate` when there is one; core's `formatTraceContext`); absent: the active
   * OpenTelemetry span's, if any (`traceContextOf`, docs/observability.md#traces).
   */
  readonly traceContext?: string;
}
