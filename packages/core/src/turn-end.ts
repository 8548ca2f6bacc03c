/** @module One queue of work for the end of the event loop's current turn, shared by the server and the adapters. */

/** What runs at the end of this turn, in the order it was queued. */
let queued: Array<() => void> = [];

function runQueued(): void {
  const callbacks = queued;
  queued = [];
  for (const callback of callbacks) {
    try {
      callback();
    } catch (error) {
      // As uncaught as it would have been in a `setImmediate` of its own, without skipping the rest.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}

/**
 * Runs `fn` at the end of this turn of the event loop — its check phase (`setImmediate`), after the
 * I/O callbacks of every request whose bytes arrived in the turn — together with, and after, every
 * other callback queued in the turn: one `setImmediate` per turn, however many callers. What is
 * queued while the queue runs waits for the next turn. The HTTP server writes the turn's responses
 * this way, and the Redis adapter sends the commands a turn wrote in one system call
 * (docs/performance.md). What `fn` throws is uncaught, as in a `setImmediate`, and skips no other callback.
 */
export function atTurnEnd(fn: () => void): void {
  if (queued.push(fn) === 1) setImmediate(runQueued);
}
