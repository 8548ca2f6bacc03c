/**
 * @module The ready-made server's OpenTelemetry SDK (docs/observability.md#traces): started only
 * when the environment asks for traces, loaded only then, shut down (flushed) last on stop.
 */
import { register } from 'node:module';

/** A started SDK: `shutdown()` flushes the spans still batched and stops exporting. */
export interface TracingHandle {
  shutdown(): Promise<void>;
}

/** True when `env` asks for traces: an OTLP endpoint, or a traces exporter other than `none`. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry Node SDK when {@link tracingRequested}, else does nothing and loads
 * nothing (`undefined`). Call it before the backend's driver is loaded: the `pg` and `ioredis`
 * instrumentations patch the modules as they are imported (through the `import-in-the-middle`
 * loader hook registered here, since Parley is ESM). Everything else comes from the standard
 * `OTEL_*` variables, read by the SDK: `OTEL_TRACES_EXPORTER` (default `otlp`),
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` by default, or `http/json`, `grpc`),
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER` and its
 * argument, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_PROPAGATORS` (default W3C trace context and
 * baggage), `OTEL_BSP_*`. The service is named `parley` unless `OTEL_SERVICE_NAME` (or a
 * `service.name` resource attribute) names it. OTLP metrics and logs stay off unless
 * `OTEL_METRICS_EXPORTER` / `OTEL_LOGS_EXPORTER` ask for them: Parley's metrics are Prometheus'.
 * Instrumented: outgoing HTTP (undici: model providers, webhooks, webhook tools), Redis (ioredis),
 * PostgreSQL (pg); the incoming requests' spans are Parley's own (`createApp`).
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingHandle | undefined> {
  if (!tracingRequested(env)) return undefined;
  // ESM imports of `pg` and `ioredis` reach the instrumentations only through this loader hook.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK }, { UndiciInstrumentation }, { IORedisInstrumentation }, { PgInstrumentation }] = await Promise.all(
    [
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-undici'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@opentelemetry/instrumentation-pg'),
    ],
  );
  const named =
    Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(!named && { serviceName: 'parley' }),
    ...(!env.OTEL_METRICS_EXPORTER?.trim() && { metricReaders: [] }),
    ...(!env.OTEL_LOGS_EXPORTER?.trim() && { logRecordProcessors: [] }),
    instrumentations: [
      new UndiciInstrumentation(),
      // Only inside a traced operation, and never a command's arguments or a query's values:
      // they hold records, keys' hashes and message content.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
