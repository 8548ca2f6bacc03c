/** @module The language models a core's agents reply with, by agent `model` name. */
import type { LanguageModel } from '../ports/language-model.js';
import { AGENT_MODELS } from '../types.js';
import { aiSdkModel, isAiSdkLanguageModel, type AiSdkLanguageModel } from './ai-sdk-model.js';

/** What `createCore(adapters, { models })` takes: agent model names → Parley or AI SDK language models. */
export type ModelMap = Record<string, LanguageModel | AiSdkLanguageModel>;

/** Agent model names: 1–128 visible ASCII characters, like the `MODELS` names of the server. */
const NAME = /^[\x21-\x7e]{1,128}$/;

/**
 * Parley models by name, AI SDK models wrapped with {@link aiSdkModel}.
 * @throws TypeError when a name is not 1–128 visible ASCII characters or a value is neither kind of model
 */
export function resolveModels(models: ModelMap = {}): ReadonlyMap<string, LanguageModel> {
  const resolved = new Map<string, LanguageModel>();
  for (const [name, model] of Object.entries(models)) {
    if (!NAME.test(name)) throw new TypeError(`models: the name ${JSON.stringify(name)} is not 1–128 visible ASCII characters.`);
    if (isAiSdkLanguageModel(model)) resolved.set(name, aiSdkModel(model));
    else if (typeof (model as Partial<LanguageModel> | null)?.stream === 'function') resolved.set(name, model as LanguageModel);
    else throw new TypeError(`models[${JSON.stringify(name)}]: expected an AI SDK language model or a Parley LanguageModel.`);
  }
  return resolved;
}

/** The `model` values agents may take: the spec's three, then every configured name not among them. */
export function agentModelNames(models: ReadonlyMap<string, LanguageModel>): readonly string[] {
  return Object.freeze([...new Set<string>([...AGENT_MODELS, ...models.keys()])]);
}
