-- 0009_trace_context: each outbox row keeps the W3C trace context its event was recorded in
-- (docs/observability.md#traces), so the worker that hands the event on — to webhook deliveries and
-- agent replies, in any process — continues the trace of the request that caused it.
--
-- `trace_context` is the `traceparent`, then a space and the `tracestate` when there is one; null
-- for an event recorded outside a trace (and for rows recorded before this migration). Adding a
-- nullable column without a default rewrites nothing: it is instant on a table of any size.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
ALTER TABLE outbox ADD COLUMN trace_context text;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (9, 'trace_context') ON CONFLICT (version) DO NOTHING;
