/** @module Fitting a feed signal into NOTIFY payloads, which PostgreSQL caps below 8 000 bytes. */
import type { FeedSignal } from '@parley/core/adapter';

/** Largest payload sent, in UTF-8 bytes (PostgreSQL refuses 8 000 and more by default). */
export const MAX_PAYLOAD_BYTES = 7_900;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * `signal` as the JSON payloads to NOTIFY, in order, each at most {@link MAX_PAYLOAD_BYTES}: one
 * payload when it fits; a `message.delta` too long is split into consecutive deltas of the same
 * reply and attempt (a stream appends deltas, so the text it shows is the same); a `reply.failed`
 * error too long is cut.
 */
export function splitSignal(signal: FeedSignal): string[] {
  const whole = JSON.stringify(signal);
  if (bytes(whole) <= MAX_PAYLOAD_BYTES) return [whole];
  if (signal.type === 'message.delta') {
    const budget = MAX_PAYLOAD_BYTES - bytes(JSON.stringify({ ...signal, delta: '' }));
    return pieces(signal.delta, budget).map((delta) => JSON.stringify({ ...signal, delta }));
  }
  if (signal.type === 'reply.failed') {
    const budget = MAX_PAYLOAD_BYTES - bytes(JSON.stringify({ ...signal, error: '' }));
    return [JSON.stringify({ ...signal, error: pieces(signal.error, budget)[0] ?? '' })];
  }
  return [whole];
}

/** `text` cut at code point boundaries into pieces whose JSON-escaped form takes at most `budget` bytes each. */
function pieces(text: string, budget: number): string[] {
  const out: string[] = [];
  let current = '';
  let used = 0;
  for (const char of text) {
    // The bytes this character takes inside a JSON string (escapes included).
    const size = bytes(JSON.stringify(char)) - 2;
    if (used + size > budget && current !== '') {
      out.push(current);
      current = '';
      used = 0;
    }
    current += char;
    used += size;
  }
  if (current !== '') out.push(current);
  return out;
}
