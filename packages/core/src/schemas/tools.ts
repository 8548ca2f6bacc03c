/**
 * @module An agent's own settings — its tool definitions, `maxSteps` and `autoReply`, top-level agent
 * fields (docs/replies-and-streams.md#tools) — and tool results: the single source of their validation.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as v from 'valibot';
import type { JsonObject, Tool } from '../types.js';
import { isPlainObject, jsonObjectProblem, text } from './common.js';
import { UrlSchema } from './webhook.js';

/** Most tools an agent may have. */
export const MAX_TOOLS = 32;
/** Largest serialized size of a tool's `parameters` JSON Schema: 16 KiB. */
export const MAX_TOOL_PARAMETERS_BYTES = 16 * 1024;
/** Deepest nesting of a tool's `parameters` (a JSON Schema nests deeper than metadata may). */
export const MAX_TOOL_PARAMETERS_DEPTH = 32;
/** An agent's `maxSteps`: model calls per reply, default and largest. */
export const MAX_STEPS = { default: 8, max: 32 } as const;
/** A webhook tool's `timeoutMs`, default and largest. */
export const TOOL_TIMEOUT_MS = { default: 15_000, max: 60_000 } as const;
/** Tool kinds: `webhook` (Parley calls its `url`) or `client` (the caller runs it and posts the result). */
export const TOOL_KINDS = ['webhook', 'client'] as const;
/** One of {@link TOOL_KINDS}. */
export type ToolKind = (typeof TOOL_KINDS)[number];

// One validator for every check: the 2020-12 meta-schema is compiled once, on first use.
let ajv: Ajv2020 | undefined;

/** What makes `schema` an invalid JSON Schema (draft 2020-12) for tool parameters, or `null`. */
function parametersProblem(schema: JsonObject): string | null {
  const shape = jsonObjectProblem(schema, MAX_TOOL_PARAMETERS_DEPTH, MAX_TOOL_PARAMETERS_BYTES);
  if (shape !== null) return shape;
  ajv ??= new Ajv2020({ strict: false, validateFormats: false });
  if (!ajv.validateSchema(schema))
    return `Not a valid JSON Schema (draft 2020-12): ${ajv.errorsText(ajv.errors, { dataVar: 'parameters' })}.`;
  if (schema.type !== 'object') return 'Expected a JSON Schema of type "object" (the tool\'s arguments are an object).';
  try {
    // Compiling resolves `$ref`s: one that points nowhere is refused here, not at the first call.
    ajv.compile(schema);
  } catch (error) {
    return `Not a usable JSON Schema: ${error instanceof Error ? error.message.slice(0, 200) : 'it does not compile'}.`;
  }
  return null;
}

/** A tool's `parameters`: a JSON Schema (draft 2020-12) of type `object`, at most 16 KiB serialized. */
const ParametersSchema = v.pipe(
  v.custom<JsonObject>(isPlainObject, 'Invalid type: expected a JSON Schema object.'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = parametersProblem(dataset.value);
    if (problem !== null) addIssue({ message: problem });
  }),
  v.metadata({
    type: 'object',
    description: `A JSON Schema (draft 2020-12) of type "object" describing the tool's arguments, at most ${MAX_TOOL_PARAMETERS_BYTES} bytes serialized.`,
  }),
);

/** One tool an agent may call. Unknown fields are refused. */
export const ToolSchema = v.pipe(
  v.strictObject({
    name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, 'Expected 1–64 letters, digits, "_" or "-".')),
    description: text(1024),
    parameters: ParametersSchema,
    kind: v.picklist(TOOL_KINDS),
    url: v.optional(UrlSchema),
    requiresApproval: v.optional(v.boolean()),
    timeoutMs: v.optional(
      v.pipe(
        v.number(),
        v.integer(`Expected an integer from 1 to ${TOOL_TIMEOUT_MS.max}.`),
        v.minValue(1, `Expected an integer from 1 to ${TOOL_TIMEOUT_MS.max}.`),
        v.maxValue(TOOL_TIMEOUT_MS.max, `Expected an integer from 1 to ${TOOL_TIMEOUT_MS.max}.`),
      ),
    ),
  }),
  v.forward(
    v.check((tool) => tool.kind !== 'webhook' || tool.url !== undefined, 'Required for a webhook tool.'),
    ['url'],
  ),
  v.forward(
    v.check((tool) => tool.kind !== 'client' || tool.url === undefined, 'Only webhook tools have a url.'),
    ['url'],
  ),
);

/** Exactly `A` and `B` are one type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// The schema's output is the record type `Tool` (types.ts): changing one alone fails to compile.
void (true satisfies Same<v.InferOutput<typeof ToolSchema>, Tool>);

/** An agent's `tools`: at most 32 tools with distinct names (`[]` when it has none). */
export const ToolsSchema = v.pipe(
  v.array(ToolSchema),
  v.maxLength(MAX_TOOLS, `Expected at most ${MAX_TOOLS} tools.`),
  v.check((tools) => new Set(tools.map((tool) => tool.name)).size === tools.length, 'Expected distinct tool names.'),
  v.description(`The tools the agent may call, at most ${MAX_TOOLS} with distinct names; \`[]\` by default.`),
);

/** An agent's `maxSteps`: at most this many model calls per reply, 1–32 (default 8). */
export const MaxStepsSchema = v.pipe(
  v.number(),
  v.integer(`Expected an integer from 1 to ${MAX_STEPS.max}.`),
  v.minValue(1, `Expected an integer from 1 to ${MAX_STEPS.max}.`),
  v.maxValue(MAX_STEPS.max, `Expected an integer from 1 to ${MAX_STEPS.max}.`),
  v.description(`The most model calls one reply makes, 1–${MAX_STEPS.max} (default ${MAX_STEPS.default}).`),
);

/** An agent's `autoReply`: whether it replies on its own to each user message (default `true`). */
export const AutoReplySchema = v.pipe(
  v.boolean(),
  v.description(
    'Whether the agent replies on its own to each user message (default `true`); ' +
      '`POST /api/conversations/{id}/reply` asks for a reply either way.',
  ),
);

/** One answer of `POST /api/conversations/:id/tool-results`: a client tool's `output`, or an approval. */
const ToolResultSchema = v.union(
  [
    v.strictObject({
      toolCallId: text(256),
      output: v.pipe(
        v.unknown(),
        v.check((value) => value !== undefined, 'Required.'),
        v.metadata({ description: "The client tool's result: any JSON value (handed to the model as JSON text)." }),
      ),
    }),
    v.strictObject({ toolCallId: text(256), approved: v.boolean(), reason: v.optional(text(1024)) }),
  ],
  'Expected {toolCallId, output} or {toolCallId, approved, reason?}.',
);

/**
 * Body of `POST /api/conversations/:id/tool-results`: answers to the calls a paused reply waits
 * for, 1–32, one per call.
 */
export const ToolResultsSchema = v.strictObject({
  results: v.pipe(
    v.array(ToolResultSchema),
    v.minLength(1, 'Expected at least one result.'),
    v.maxLength(MAX_TOOLS, `Expected at most ${MAX_TOOLS} results.`),
    v.check(
      (results) => new Set(results.map((result) => result.toolCallId)).size === results.length,
      'Expected one result per toolCallId.',
    ),
  ),
});
export type ToolResultsInput = v.InferInput<typeof ToolResultsSchema>;
