/** @module The language models a core's agents reply with, by agent `model` name. */
import type { LanguageModel } from '../ports/language-model.js';
import { AGENT_MODELS } from '../types.js';
import { aiSdkModel, isAiSdkLanguageModel, type AiSdkLanguageModel } from './ai-sdk-model.js';

/**
 * A language model with its options: `contextWindow` is how many tokens its prompt and reply may
 * take together (default 8 192; docs/replies-and-streams.md#context-that-fits-the-model).
 */
export interface ModelEntry {
  model: LanguageModel | AiSdkLanguageModel;
  contextWindow?: number;
}

/**
 * What `createCore(adapters, { models })` takes: agent model names → Parley or AI SDK language
 * models, each alone or as a {@link ModelEntry} with its options.
 */
export type ModelMap = Record<string, LanguageModel | AiSdkLanguageModel | ModelEntry>;

/** The most tokens a `contextWindow` may declare. */
const MAX_CONTEXT_WINDOW = 100_000_000;

/** True when `value` is a {@link ModelEntry} rather than a model. */
function isEntry(value: ModelMap[string]): value is ModelEntry {
  return typeof value === 'object' && value !== null && 'model' in value && !isModel(value);
}

function isModel(value: unknown): value is LanguageModel | AiSdkLanguageModel {
  return isAiSdkLanguageModel(value) || typeof (value as Partial<LanguageModel> | null)?.stream === 'function';
}

/**
 * The `contextWindow` of each model of `models` that declares one, by name.
 * @throws RangeError when a `contextWindow` is not an integer from 1 to 100 000 000
 */
export function contextWindows(models: ModelMap = {}): ReadonlyMap<string, number> {
  const windows = new Map<string, number>();
  for (const [name, value] of Object.entries(models)) {
    if (!isEntry(value) || value.contextWindow === undefined) continue;
    const window = value.contextWindow;
    if (!Number.isSafeInteger(window) || window < 1 || window > MAX_CONTEXT_WINDOW)
      throw new RangeError(`models[${JSON.stringify(name)}].contextWindow: expected an integer from 1 to 100 000 000.`);
    windows.set(name, window);
  }
  return windows;
}

/** Agent model names: 1–128 visible ASCII characters, like the `MODELS` names of the server. */
const NAME = /^[\x21-\x7e]{1,128}$/;

/**
 * Parley models by name, AI SDK models wrapped with {@link aiSdkModel}.
 * @throws TypeError when a name is not 1–128 visible ASCII characters or a value is neither kind of model
 */
export function resolveModels(models: ModelMap = {}): ReadonlyMap<string, LanguageModel> {
  const resolved = new Map<string, LanguageModel>();
  for (const [name, value] of Object.entries(models)) {
    const model = isEntry(value) ? value.model : value;
    if (!NAME.test(name))
      throw new TypeError(`models: the name ${JSON.stringify(name)} is not 1–128 visible ASCII characters.`);
    if (isAiSdkLanguageModel(model)) resolved.set(name, aiSdkModel(model));
    else if (typeof (model as Partial<LanguageModel> | null)?.stream === 'function')
      resolved.set(name, model as LanguageModel);
    else
      throw new TypeError(
        `models[${JSON.stringify(name)}]: expected an AI SDK language model or a Parley LanguageModel.`,
      );
  }
  return resolved;
}

/** The `model` values agents may take: the spec's three, then every configured name not among them. */
export function agentModelNames(models: ReadonlyMap<string, LanguageModel>): readonly string[] {
  return Object.freeze([...new Set<string>([...AGENT_MODELS, ...models.keys()])]);
}
