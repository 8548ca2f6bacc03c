/**
 * @module The reply variables of the server configuration: `MODELS` (agent model names → language
 * models of an OpenAI-compatible Chat Completions server) and `REPLY_CONTEXT_MESSAGES`.
 */
import * as v from 'valibot';

/**
 * One configured model. `apiKey` is resolved at start-up (inline, or from the variable named by
 * `apiKeyEnv`) and is not enumerable, so serializing or logging a config never prints it.
 */
export interface ModelConfig {
  provider: 'openai-compatible';
  /** The API's base URL, up to and including the version segment (`http://127.0.0.1:11434/v1`). */
  baseURL: string;
  /** The provider's model id (`llama3.2`, `gpt-4o-mini`, …). */
  model: string;
  /** Sent as `Authorization: Bearer`; absent for servers that need none (Ollama). */
  readonly apiKey?: string;
  /**
   * Tokens the model's prompt and reply may take together (default 8 192): a reply's prompt keeps
   * the newest whole turns that fit (docs/replies-and-streams.md#context-that-fits-the-model).
   */
  contextWindow?: number;
}

/** The default number of latest messages a reply is generated from. */
export const DEFAULT_REPLY_CONTEXT_MESSAGES = 50;

/** Model names agents may use: 1–128 visible ASCII characters (e.g. `llama3.2:3b`, `team/gpt`). */
const NAME = /^[\x21-\x7e]{1,128}$/;
/** POSIX-style environment variable names. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const EntrySchema = v.strictObject({
  provider: v.literal('openai-compatible', 'Expected "openai-compatible".'),
  baseURL: v.pipe(
    v.string('Expected a string.'),
    v.check(
      (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
      'Expected an http:// or https:// URL.',
    ),
  ),
  model: v.pipe(
    v.string('Expected a string.'),
    v.minLength(1, 'Expected 1–256 characters.'),
    v.maxLength(256, 'Expected 1–256 characters.'),
  ),
  apiKey: v.optional(v.pipe(v.string('Expected a string.'), v.minLength(1, 'Expected a non-empty string.'))),
  apiKeyEnv: v.optional(
    v.pipe(v.string('Expected a string.'), v.regex(ENV_NAME, 'Expected an environment variable name.')),
  ),
  contextWindow: v.optional(
    v.pipe(
      v.number('Expected an integer from 1 to 100000000 (tokens).'),
      v.integer('Expected an integer from 1 to 100000000 (tokens).'),
      v.minValue(1, 'Expected an integer from 1 to 100000000 (tokens).'),
      v.maxValue(100_000_000, 'Expected an integer from 1 to 100000000 (tokens).'),
    ),
  ),
});

// Never let valibot describe the input: an entry holds an API key.
function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (issuePath(issue) === '.contextWindow') return 'Expected an integer from 1 to 100000000 (tokens).';
  if (issue.type !== 'strict_object') return 'Invalid value.';
  if (issue.received === 'undefined') return 'Required.';
  if (issue.expected === 'never') return 'Unknown field.';
  return 'Expected an object {provider, baseURL, model, apiKey?, apiKeyEnv?, contextWindow?}.';
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((item) => `.${String(item.key)}`).join('');
}

/**
 * Reads `MODELS` and `REPLY_CONTEXT_MESSAGES` from `env` (empty counts as unset), appending one
 * message per problem to `problems` — naming the variable and the field, never a value. An
 * `apiKeyEnv` must name a set variable; `apiKey` and `apiKeyEnv` together are refused.
 * `models` is `{}` when `MODELS` is unset (agents never reply).
 */
export function readModelsConfig(
  env: Record<string, string | undefined>,
  problems: string[],
): { models: Record<string, ModelConfig>; replyContextMessages: number } {
  const models: Record<string, ModelConfig> = {};
  const raw = env.MODELS === '' ? undefined : env.MODELS;
  if (raw !== undefined) readModels(raw, env, problems, models);
  let replyContextMessages = DEFAULT_REPLY_CONTEXT_MESSAGES;
  const context = env.REPLY_CONTEXT_MESSAGES;
  if (context !== undefined && context !== '') {
    const value = /^\d{1,4}$/.test(context) ? Number(context) : Number.NaN;
    if (value >= 1 && value <= 1000) replyContextMessages = value;
    else problems.push('REPLY_CONTEXT_MESSAGES: Expected an integer from 1 to 1000.');
  }
  return { models, replyContextMessages };
}

function readModels(
  raw: string,
  env: Record<string, string | undefined>,
  problems: string[],
  out: Record<string, ModelConfig>,
): void {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // The parser's message would quote part of the input, which may hold a key.
    problems.push('MODELS: Not valid JSON.');
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(
      'MODELS: Expected a JSON object of model names to {provider, baseURL, model, apiKey?, apiKeyEnv?, contextWindow?}.',
    );
    return;
  }
  for (const [name, entry] of Object.entries(value)) {
    if (!NAME.test(name)) {
      problems.push(
        `MODELS: A model name must be 1–128 visible ASCII characters (entry ${Object.keys(value).indexOf(name) + 1}).`,
      );
      continue;
    }
    const label = `MODELS[${JSON.stringify(name)}]`;
    const result = v.safeParse(EntrySchema, entry, { message: describeIssue });
    if (!result.success) {
      problems.push(...result.issues.map((issue) => `${label}${issuePath(issue)}: ${issue.message}`));
      continue;
    }
    const { apiKey, apiKeyEnv, ...rest } = result.output;
    if (apiKey !== undefined && apiKeyEnv !== undefined) {
      problems.push(`${label}: Give apiKey or apiKeyEnv, not both.`);
      continue;
    }
    let key = apiKey;
    if (apiKeyEnv !== undefined) {
      key = env[apiKeyEnv] === '' ? undefined : env[apiKeyEnv];
      if (key === undefined) {
        problems.push(`${label}.apiKeyEnv: The variable ${apiKeyEnv} is not set.`);
        continue;
      }
    }
    const config: ModelConfig = { ...rest };
    if (key !== undefined) Object.defineProperty(config, 'apiKey', { value: key, enumerable: false });
    out[name] = config;
  }
}
