/** @module Test helper: reads a server-sent event stream over real HTTP, event by event. Not built. */

/** One event as received: `comment` for `:` lines. */
export interface ReceivedEvent {
  event: string;
  id?: string;
  data: string;
}

/** An open stream; `next()` waits for the next event (rejects after `timeoutMs`). */
export interface EventStreamReader {
  status: number;
  headers: Headers;
  /** Every event received so far, in order. */
  received: ReceivedEvent[];
  next(timeoutMs?: number): Promise<ReceivedEvent>;
  /** Waits until an event matches `predicate`, returning it (and keeping the ones before in `received`). */
  until(predicate: (event: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` with `headers` and parses `text/event-stream` (WHATWG HTML "Server-sent events"). */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const received: ReceivedEvent[] = [];
  const waiters: Array<() => void> = [];
  let cursor = 0;
  let finished = false;
  const notify = () => waiters.splice(0).forEach((wake) => wake());
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    let current: { event?: string; id?: string; data: string[] } = { data: [] };
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (current.data.length > 0 || current.event) {
              received.push({
                event: current.event ?? 'message',
                ...(current.id !== undefined && { id: current.id }),
                data: current.data.join('\n'),
              });
              notify();
            }
            current = { data: [] };
          } else if (line.startsWith(':')) {
            received.push({ event: 'comment', data: line.slice(1).trim() });
            notify();
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') current.event = value;
            else if (field === 'id') current.id = value;
            else if (field === 'data') current.data.push(value);
          }
        }
      }
    } catch {
      // Aborted by close(), or the connection was cut.
    } finally {
      finished = true;
      notify();
    }
  })();
  const next = async (timeoutMs = 5_000): Promise<ReceivedEvent> => {
    const deadline = Date.now() + timeoutMs;
    while (cursor >= received.length) {
      if (finished) throw new Error('The stream ended.');
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`No event within ${timeoutMs} ms (received: ${received.map((e) => e.event).join(', ')}).`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return received[cursor++]!;
  };
  return {
    status: response.status,
    headers: response.headers,
    received,
    next,
    async until(predicate, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const event = await next(Math.max(1, deadline - Date.now()));
        if (predicate(event)) return event;
      }
    },
    ended,
    close: () => controller.abort(),
  };
}
