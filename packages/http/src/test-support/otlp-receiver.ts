/**
 * @module An OTLP/HTTP trace receiver on loopback (`POST /v1/traces`) that decodes what exporters
 * send — `application/json` (OTLP/JSON) and `application/x-protobuf` (the `ExportTraceServiceRequest`
 * of opentelemetry-proto's `collector/trace/v1`, read field by field from the wire format) — into
 * plain spans, for tests. Not built.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A received span: ids in lower-case hex, attributes as plain values, its resource's attributes. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** `''` for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's `SpanKind`: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** The status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** Start and end, in ms since the epoch (fractional). */
  startMs: number;
  endMs: number;
  resource: Record<string, unknown>;
  scope: string;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`, the `OTEL_EXPORTER_OTLP_ENDPOINT` to set. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** The content types of the export requests received, in order. */
  contentTypes: string[];
  close(): Promise<void>;
}

/** Starts a receiver answering every export with 200 and an empty `ExportTraceServiceResponse`. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer(async (request, response) => {
    const body = await read(request);
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    contentTypes.push(type);
    try {
      if (type === 'application/json') {
        spans.push(...fromJson(JSON.parse(body.toString('utf8'))));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        spans.push(...fromProtobuf(body));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      }
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function read(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ids as hex strings.

type JsonAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
};
type JsonKeyValue = { key: string; value: JsonAnyValue };

function jsonValue(value: JsonAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  return null;
}

const jsonAttributes = (list: JsonKeyValue[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, jsonValue(value)]));

function fromJson(request: {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonKeyValue[];
        status?: { code?: number };
        startTimeUnixNano?: string;
        endTimeUnixNano?: string;
      }>;
    }>;
  }>;
}): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId.toLowerCase(),
        spanId: span.spanId.toLowerCase(),
        parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
        name: span.name,
        kind: span.kind ?? 0,
        attributes: jsonAttributes(span.attributes),
        status: span.status?.code ?? 0,
        startMs: nanosToMs(BigInt(span.startTimeUnixNano ?? 0)),
        endMs: nanosToMs(BigInt(span.endTimeUnixNano ?? 0)),
        resource,
        scope: scopeSpans.scope?.name ?? '',
      })),
    );
  });
}

// OTLP/protobuf: the protobuf wire format (varint, fixed64, length-delimited, fixed32) and the
// field numbers of opentelemetry-proto's trace/v1, common/v1 and resource/v1 messages.

type Field = { number: number; wire: number; varint: bigint; bytes: Buffer };

function* fields(buffer: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[at++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { number, wire, varint: varint(), bytes: Buffer.alloc(0) };
    else if (wire === 1) yield { number, wire, varint: 0n, bytes: buffer.subarray(at, (at += 8)) };
    else if (wire === 5) yield { number, wire, varint: 0n, bytes: buffer.subarray(at, (at += 4)) };
    else if (wire === 2) {
      const length = Number(varint());
      yield { number, wire, varint: 0n, bytes: buffer.subarray(at, (at += length)) };
    } else throw new Error(`protobuf: unsupported wire type ${wire}`);
  }
}

/** `AnyValue`: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1: repeated AnyValue). */
function anyValue(buffer: Buffer): unknown {
  let value: unknown = null;
  for (const field of fields(buffer)) {
    if (field.number === 1) value = field.bytes.toString('utf8');
    else if (field.number === 2) value = field.varint !== 0n;
    else if (field.number === 3) value = Number(BigInt.asIntN(64, field.varint));
    else if (field.number === 4) value = field.bytes.readDoubleLE(0);
    else if (field.number === 5)
      value = [...fields(field.bytes)].filter((item) => item.number === 1).map((item) => anyValue(item.bytes));
  }
  return value;
}

/** `KeyValue`: 1 key, 2 value (AnyValue). */
function keyValue(buffer: Buffer): [string, unknown] {
  let key = '';
  let value: unknown = null;
  for (const field of fields(buffer)) {
    if (field.number === 1) key = field.bytes.toString('utf8');
    else if (field.number === 2) value = anyValue(field.bytes);
  }
  return [key, value];
}

/** `ExportTraceServiceRequest`: 1 ResourceSpans (1 Resource, 2 ScopeSpans (1 scope, 2 Span)). */
function fromProtobuf(buffer: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of fields(buffer)) {
    if (resourceSpans.number !== 1) continue;
    const resource: Record<string, unknown> = {};
    const scopes: Buffer[] = [];
    for (const field of fields(resourceSpans.bytes)) {
      if (field.number === 1)
        for (const attribute of fields(field.bytes))
          if (attribute.number === 1) Object.assign(resource, Object.fromEntries([keyValue(attribute.bytes)]));
      if (field.number === 2) scopes.push(field.bytes);
    }
    for (const scopeSpans of scopes) {
      let scope = '';
      for (const field of fields(scopeSpans)) {
        if (field.number === 1)
          for (const part of fields(field.bytes)) if (part.number === 1) scope = part.bytes.toString('utf8');
        if (field.number === 2) spans.push({ ...span(field.bytes), resource, scope });
      }
    }
  }
  return spans;
}

const nanosToMs = (nanos: bigint) => Number(nanos / 1000n) / 1000;

/**
 * `Span`: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 7 start and 8 end time (fixed64
 * ns), 9 attributes, 15 status (3 code).
 */
function span(buffer: Buffer): Omit<ReceivedSpan, 'resource' | 'scope'> {
  const result: Omit<ReceivedSpan, 'resource' | 'scope'> = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    attributes: {},
    status: 0,
    startMs: 0,
    endMs: 0,
  };
  for (const field of fields(buffer)) {
    if (field.number === 1) result.traceId = field.bytes.toString('hex');
    else if (field.number === 2) result.spanId = field.bytes.toString('hex');
    else if (field.number === 4) result.parentSpanId = field.bytes.toString('hex');
    else if (field.number === 5) result.name = field.bytes.toString('utf8');
    else if (field.number === 6) result.kind = Number(field.varint);
    else if (field.number === 7) result.startMs = nanosToMs(field.bytes.readBigUInt64LE(0));
    else if (field.number === 8) result.endMs = nanosToMs(field.bytes.readBigUInt64LE(0));
    else if (field.number === 9) {
      const [key, value] = keyValue(field.bytes);
      result.attributes[key] = value;
    } else if (field.number === 15)
      for (const part of fields(field.bytes)) if (part.number === 3) result.status = Number(part.varint);
  }
  return result;
}
