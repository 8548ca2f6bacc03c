/**
 * @module The deadline of one call to a backend (a Redis command, a PostgreSQL statement), measured
 * in time this process could have read the answer, shared by the Redis and PostgreSQL adapters.
 */

/** A deadline timer this late (ms) means this process was busy, not that the backend was slow. */
const STALL_MS = 50;
/** The most time (ms) one deadline is extended by for such stalls of this process. */
export const STALL_ALLOWANCE_MS = 5_000;

/**
 * Calls `expire` once `ms` milliseconds have passed in which this process could read the answer.
 * A timer that fires late says the event loop was busy (a start, a long GC, a loaded machine): the
 * backend gets that time again, up to {@link STALL_ALLOWANCE_MS} in all. And since timers run
 * before the event loop reads sockets, `expire` runs in the check phase after the timer: an
 * answer that arrived meanwhile is read first, so a write that was applied is not reported as
 * failed. Returns what cancels the deadline (call it when the answer came).
 */
export function callDeadline(ms: number, expire: () => void): () => void {
  let due = Date.now() + ms;
  let allowance = STALL_ALLOWANCE_MS;
  let immediate: NodeJS.Immediate | undefined;
  const check = () => {
    const lateMs = Date.now() - due;
    if (lateMs > STALL_MS && allowance > 0) {
      const extraMs = Math.min(lateMs, allowance);
      allowance -= extraMs;
      due = Date.now() + extraMs;
      timer = setTimeout(check, extraMs);
      return;
    }
    immediate = setImmediate(expire);
  };
  let timer = setTimeout(check, ms);
  return () => {
    clearTimeout(timer);
    if (immediate !== undefined) clearImmediate(immediate);
  };
}
