/** @module The reply service's settings, apart from the service so the composition root's tokens can name them. */

/** Settings of replies (`createCore` `replyContextMessages`, `replyRetryDelaysMs`). */
export interface ReplyOptions {
  /** How many of the conversation's latest messages a reply is generated from (default 50). */
  contextMessages: number;
  /** Waits between the 3 tries of a failing provider, in ms (default `[1000, 4000]`). */
  retryDelaysMs: readonly number[];
  /**
   * Context windows by agent model name, in tokens (`contextWindow` of a model's entry); a model
   * not named has `DEFAULT_CONTEXT_WINDOW` (8 192). Absent: every model has the default.
   */
  contextWindows?: ReadonlyMap<string, number>;
}
