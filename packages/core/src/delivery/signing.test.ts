/** @module Tests of Standard Webhooks signing against the spec's test vector and the `standardwebhooks` package. */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../types.js';
import { secretKey, signPayload, signWebhook, signingSecrets } from './signing.js';

// The Standard Webhooks specification's published test vector (standard-webhooks repository,
// spec/standard-webhooks.md and its libraries' tests).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const event: DomainEvent = {
  id: 'evt_01JD0000000000000000000000',
  type: 'message.sent',
  workspaceId: 'ws1',
  occurredAt: '2026-11-22T07:00:00.000Z',
  data: {
    id: 'msg_1',
    conversationId: 'conv_1',
    content: 'Grüße ✓ "quoted"',
    role: 'user',
    metadata: {},
    toolCalls: null,
    toolCallId: null,
    createdAt: '2026-11-22T07:00:00.000Z',
  },
};

function headersOf(signed: { headers: Record<string, string> }) {
  return {
    'webhook-id': signed.headers['webhook-id']!,
    'webhook-timestamp': signed.headers['webhook-timestamp']!,
    'webhook-signature': signed.headers['webhook-signature']!,
  };
}

describe('Standard Webhooks signing', () => {
  it('reproduces the specification test vector', () => {
    expect(signPayload(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('decodes whsec_ secrets as base64 and uses other secrets as raw UTF-8 bytes', () => {
    expect(secretKey(VECTOR.secret)).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
    expect(secretKey('a-plain-secret-ü')).toEqual(Buffer.from('a-plain-secret-ü', 'utf8'));
  });

  it('signs what the standardwebhooks package verifies, for whsec_ secrets', () => {
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const now = Date.now();
    const signed = signWebhook({ secret, previousSecrets: [] }, event, now);
    const verified = new Webhook(secret).verify(signed.body, headersOf(signed));
    expect(verified).toEqual({ type: 'message.sent', timestamp: event.occurredAt, data: event.data });
    expect(signed.headers['webhook-id']).toBe(event.id);
    expect(signed.headers['webhook-timestamp']).toBe(String(Math.floor(now / 1000)));
  });

  it('signs what the standardwebhooks package verifies, for raw secrets (given to it as bytes)', () => {
    const secret = 'a raw secret of some length';
    const signed = signWebhook({ secret, previousSecrets: [] }, event, Date.now());
    expect(() =>
      new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(signed.body, headersOf(signed)),
    ).not.toThrow();
    expect(() =>
      new Webhook(Buffer.from('another secret here', 'utf8'), { format: 'raw' }).verify(signed.body, headersOf(signed)),
    ).toThrow();
  });

  it('carries two signatures during a rotation overlap, each verifying, and one after it', () => {
    const fresh = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
    const old = 'whsec_' + Buffer.alloc(32, 2).toString('base64');
    const now = Date.now();
    const endpoint = {
      secret: fresh,
      previousSecrets: [{ secret: old, expiresAt: new Date(now + 60_000).toISOString() }],
    };
    const during = signWebhook(endpoint, event, now);
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(fresh).verify(during.body, headersOf(during))).not.toThrow();
    expect(() => new Webhook(old).verify(during.body, headersOf(during))).not.toThrow();
    expect(signingSecrets(endpoint, now + 60_000)).toEqual([fresh]);
    const after = signWebhook(endpoint, event, now + 61_000);
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(() => new Webhook(old).verify(after.body, headersOf(after))).toThrow();
  });
});
