/**
 * @module Standard Webhooks signing (https://www.standardwebhooks.com, spec v1): the payload Parley
 * sends, its `webhook-*` headers and the `v1` HMAC-SHA256 signature, dual-signed during a rotation.
 */
import { createHmac } from 'node:crypto';
import type { DomainEvent, PreviousSecret, WebhookEndpointRecord } from '../types.js';

/** The prefix of Standard Webhooks secrets; what follows it is base64 of the key bytes. */
const WHSEC = 'whsec_';

/**
 * The key bytes of a signing secret: base64-decoded after a `whsec_` prefix (Standard Webhooks),
 * otherwise the secret's raw UTF-8 bytes (README "Receiving webhooks").
 */
export function secretKey(secret: string): Buffer {
  return secret.startsWith(WHSEC) ? Buffer.from(secret.slice(WHSEC.length), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * One Standard Webhooks signature, `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
 * `timestampSeconds` is Unix seconds; `body` is the exact text sent.
 */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The replaced secrets of `endpoint` still in their overlap at `nowMs` (`expiresAt` ahead), newest
 * first. Also reads records stored before rotations kept two (`previousSecret`, one or `null`).
 */
export function livePreviousSecrets(
  endpoint: Pick<WebhookEndpointRecord, 'previousSecrets'>,
  nowMs: number,
): PreviousSecret[] {
  const legacy = (endpoint as { previousSecret?: PreviousSecret | null }).previousSecret;
  const all = endpoint.previousSecrets ?? (legacy ? [legacy] : []);
  return all.filter((previous) => Date.parse(previous.expiresAt) > nowMs);
}

/**
 * The secrets a delivery at `nowMs` is signed with: the endpoint's secret, then those rotations
 * replaced while their 24 h overlap lasts (at most three in all).
 */
export function signingSecrets(
  endpoint: Pick<WebhookEndpointRecord, 'secret' | 'previousSecrets'>,
  nowMs: number,
): string[] {
  return [endpoint.secret, ...livePreviousSecrets(endpoint, nowMs).map((previous) => previous.secret)];
}

/** The JSON body of a delivery: `{type, timestamp, data}` (README "Receiving webhooks"). */
export function webhookBody(event: Pick<DomainEvent, 'type' | 'occurredAt' | 'data'>): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event.data });
}

/** What is sent for one attempt: the body and every header, signature included. */
export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
}

/**
 * Signs `event` for `endpoint` at `nowMs`: `webhook-id` is the event id (the same on every
 * attempt, so receivers can deduplicate), `webhook-timestamp` the attempt's Unix seconds (so a
 * retry passes receivers' 5-minute tolerance), `webhook-signature` one `v1,…` entry per secret of
 * {@link signingSecrets}, separated by a space.
 */
export function signWebhook(
  endpoint: Pick<WebhookEndpointRecord, 'secret' | 'previousSecrets'>,
  event: Pick<DomainEvent, 'id' | 'type' | 'occurredAt' | 'data'>,
  nowMs: number,
): SignedWebhook {
  const body = webhookBody(event);
  const timestamp = Math.floor(nowMs / 1000);
  const signature = signingSecrets(endpoint, nowMs)
    .map((secret) => signPayload(secret, event.id, timestamp, body))
    .join(' ');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Parley-Webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    },
  };
}
