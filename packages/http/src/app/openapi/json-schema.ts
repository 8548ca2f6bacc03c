/**
 * @module Core's valibot schemas as JSON Schema 2020-12, the dialect of OpenAPI 3.1: named
 * components, `$ref`s to them, and query parameters.
 */
import {
  AgentCreateSchema,
  AgentListSchema,
  AgentSchema,
  AgentUpdateSchema,
  ApiErrorSchema,
  ConversationCreateSchema,
  ConversationListSchema,
  ConversationSchema,
  ConversationUpdateSchema,
  DeleteResultSchema,
  HealthSchema,
  MessageCreateSchema,
  MessageHistorySchema,
  MessageSchema,
  ReplyRequestedSchema,
  ValidationIssueSchema,
  WebhookCreateSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookUpdateSchema,
  DeliveryAttemptSchema,
  DeliveryListSchema,
  RecoverSchema,
  RecoverResultSchema,
  RetryResultSchema,
  RotateSecretSchema,
  RotateSecretResultSchema,
  WebhookTestSchema,
  EventSchema,
  EventListSchema,
  AgentWithToolsSecretSchema,
  ToolSchema,
  ToolCallSchema,
  PendingToolCallSchema,
  ToolResultsSchema,
  ToolResultsAcceptedSchema,
  ReplyFailedSchema,
  ReplyRequiresActionSchema,
  ReplyCancelledSchema,
  RepliesCancelledSchema,
  UsageReportSchema,
  CallingKeySchema,
} from '@parley/core';
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import type { OpenAPIV3_1 } from 'openapi-types';
import type * as v from 'valibot';
import { SANDBOX_SCHEMAS } from '../../sandbox/plant-schemas.js';

/**
 * Schemas the document names in `components.schemas`: core's, then the sandbox's, which keep the
 * names of its own document (its flat error is `Error`, so the Parley error is `ApiError`).
 */
const NAMED_SCHEMAS = {
  Agent: AgentSchema,
  AgentList: AgentListSchema,
  AgentCreate: AgentCreateSchema,
  AgentUpdate: AgentUpdateSchema,
  AgentWithToolsSecret: AgentWithToolsSecretSchema,
  Tool: ToolSchema,
  ToolCall: ToolCallSchema,
  PendingToolCall: PendingToolCallSchema,
  ToolResults: ToolResultsSchema,
  ToolResultsAccepted: ToolResultsAcceptedSchema,
  ReplyFailed: ReplyFailedSchema,
  ReplyRequiresAction: ReplyRequiresActionSchema,
  ReplyCancelled: ReplyCancelledSchema,
  RepliesCancelled: RepliesCancelledSchema,
  UsageReport: UsageReportSchema,
  CallingKey: CallingKeySchema,
  Conversation: ConversationSchema,
  ConversationList: ConversationListSchema,
  ConversationCreate: ConversationCreateSchema,
  ConversationUpdate: ConversationUpdateSchema,
  Message: MessageSchema,
  MessageHistory: MessageHistorySchema,
  MessageCreate: MessageCreateSchema,
  ReplyRequested: ReplyRequestedSchema,
  WebhookEndpoint: WebhookEndpointSchema,
  WebhookEndpointCreated: WebhookEndpointCreatedSchema,
  WebhookEndpointList: WebhookEndpointListSchema,
  WebhookCreate: WebhookCreateSchema,
  WebhookUpdate: WebhookUpdateSchema,
  DeliveryAttempt: DeliveryAttemptSchema,
  DeliveryList: DeliveryListSchema,
  RecoverRequest: RecoverSchema,
  RecoverResult: RecoverResultSchema,
  RetryResult: RetryResultSchema,
  RotateSecretRequest: RotateSecretSchema,
  RotateSecretResult: RotateSecretResultSchema,
  WebhookTestRequest: WebhookTestSchema,
  Event: EventSchema,
  EventList: EventListSchema,
  DeleteResult: DeleteResultSchema,
  ValidationIssue: ValidationIssueSchema,
  ApiError: ApiErrorSchema,
  Health: HealthSchema,
  ...SANDBOX_SCHEMAS,
} satisfies Record<string, v.GenericSchema>;

type AnySchema = v.BaseSchema<unknown, unknown, v.BaseIssue<unknown>>;
type SchemaObject = OpenAPIV3_1.SchemaObject;

/**
 * A URL query or path value arrives as text, so core accepts a number or its decimal digits
 * (`union([number, pipe(string, regex, transform(Number))])`). To a caller that is a number.
 */
function isNumberOrDigits(schema: AnySchema): boolean {
  if (schema.type !== 'union') return false;
  const options = (schema as unknown as { options: AnySchema[] }).options;
  const digits = (option: AnySchema) => {
    const pipe = (option as { pipe?: Array<{ type: string }> }).pipe;
    return pipe?.[0]?.type === 'string' && pipe.some((item) => item.type === 'transform');
  };
  return (
    options.some((option) => option.type === 'number') &&
    options.every((option) => option.type === 'number' || digits(option))
  );
}

/**
 * `{"anyOf": [{"type": "string"}, {"type": "null"}]}` as `{"type": ["string", "null"]}`: the
 * same in JSON Schema, and the form OpenAPI 3.1 tools (Scalar among them) expect. Left as it
 * is when the inner schema is not a plain typed one.
 */
function typeOrNull(jsonSchema: JsonSchema): JsonSchema | undefined {
  const [inner, nullType, ...rest] = (jsonSchema.anyOf ?? []) as JsonSchema[];
  if (!inner || rest.length || nullType?.type !== 'null' || typeof inner.type !== 'string' || inner.$ref)
    return undefined;
  const { anyOf: _anyOf, ...outer } = jsonSchema;
  // A nullable enum: `null` joins the allowed values too (`enum` alone would refuse it).
  return {
    ...inner,
    ...outer,
    type: [inner.type, 'null'],
    ...(inner.enum ? { enum: [...(inner.enum as unknown[]), null] } : {}),
  } as JsonSchema;
}

/**
 * A union of object schemas (`anyOf` of `$ref`s) also says `"type": "object"`: the same in JSON
 * Schema, and Scalar's reference page refuses an `anyOf` without a `type` beside it.
 */
function objectUnion(valibotSchema: AnySchema, jsonSchema: JsonSchema): JsonSchema | undefined {
  const options = (valibotSchema as unknown as { options?: AnySchema[] }).options ?? [];
  if (
    !jsonSchema.anyOf ||
    options.length === 0 ||
    !options.every((option) => option.type === 'object' || option.type === 'strict_object')
  )
    return undefined;
  return { ...jsonSchema, type: 'object' };
}

const CONFIG: ConversionConfig = {
  target: 'draft-2020-12',
  // Requests are documented as the caller sends them, before core's transforms.
  typeMode: 'input',
  // `check` and `raw_check` actions are refinements JSON Schema cannot express; their schemas say them in words.
  ignoreActions: ['check', 'raw_check'],
  overrideSchema({ valibotSchema, jsonSchema }) {
    // A `custom` schema describes itself with a `metadata` action later in its pipe.
    if (valibotSchema.type === 'custom') return {};
    if (isNumberOrDigits(valibotSchema)) return { type: 'number' };
    if (valibotSchema.type === 'nullable') return typeOrNull(jsonSchema);
    if (valibotSchema.type === 'union') return objectUnion(valibotSchema, jsonSchema);
    return undefined;
  },
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
};

/** Named schemas that differ from one core to another: the agent bodies, whose `model` picklist holds the configured names. */
export type CoreSchemas = Partial<Pick<typeof NAMED_SCHEMAS, 'AgentCreate' | 'AgentUpdate'>>;

/**
 * `components.schemas`: every schema of {@link NAMED_SCHEMAS}, referring to each other by `$ref`,
 * with `overrides` in place of the defaults (routes `$ref` these by name, so the document shows
 * the app's core, e.g. its agent model names).
 */
export function componentSchemas(overrides: CoreSchemas = {}): Record<string, SchemaObject> {
  return toJsonSchemaDefs({ ...NAMED_SCHEMAS, ...overrides }, CONFIG) as Record<string, SchemaObject>;
}

const NAME_BY_SCHEMA = new Map<unknown, string>(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [schema, name]));

/**
 * Conversions by schema. Every `createApp` documents its routes, and schemas are module-level
 * constants, so each is converted once per process. Results are shared: never mutate them.
 */
const converted = new WeakMap<object, SchemaObject | OpenAPIV3_1.ReferenceObject>();

/** A `$ref` to a named schema, or the schema converted in place (its named parts by `$ref`). */
export function schemaObject(schema: v.GenericSchema): SchemaObject | OpenAPIV3_1.ReferenceObject {
  const name = NAME_BY_SCHEMA.get(schema);
  if (name) return { $ref: `#/components/schemas/${name}` };
  let result = converted.get(schema);
  if (!result) {
    const {
      $schema: _dialect,
      $defs: _named,
      ...inline
    } = toJsonSchema(schema, { ...CONFIG, definitions: NAMED_SCHEMAS }) as SchemaObject & {
      $schema?: string;
      $defs?: unknown;
    };
    result = inline;
    converted.set(schema, result);
  }
  return result;
}

/**
 * One parameter per field of an object schema (a query or the path). A field's `description` moves
 * from its schema to the parameter, where documentation renderers show it.
 */
export function parametersOf(schema: v.GenericSchema, location: 'query' | 'path'): OpenAPIV3_1.ParameterObject[] {
  const object = schemaObject(schema) as SchemaObject;
  if (object.type !== 'object' || !object.properties)
    throw new TypeError(`A ${location} schema must be an object of fields.`);
  return Object.entries(object.properties).map(([name, property]) => {
    const { description, ...fieldSchema } = property as SchemaObject;
    const required = location === 'path' || (object.required ?? []).includes(name);
    // openapi-types types a 3.1 parameter's schema with 3.0's SchemaObject; the value is 3.1's.
    return {
      name,
      in: location,
      required,
      ...(description ? { description } : {}),
      schema: fieldSchema as OpenAPIV3_1.ParameterObject['schema'],
    };
  });
}
