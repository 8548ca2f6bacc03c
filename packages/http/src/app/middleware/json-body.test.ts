/** @module Tests of body handling: 413 (declared and chunked), 415, malformed JSON, missing bodies. */
import { describe, expect, it } from 'vitest';
import { agentInput, harness, json } from '../../test-support/harness.js';
import { isIdentityEncoding, isJsonMediaType } from './json-body.js';

function chunked(chunks: number, size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ === chunks) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
}

describe('jsonBody', () => {
  it('a compressed body is 415 unsupported_media_type with Accept-Encoding: identity, and nothing is created', async () => {
    const h = await harness();
    for (const encoding of ['gzip', 'br', 'identity, gzip', 'x-custom']) {
      const response = await h.call('POST', '/api/agents', {
        json: agentInput,
        headers: { 'Content-Encoding': encoding },
      });
      expect(response.status, encoding).toBe(415);
      expect(response.headers.get('Accept-Encoding')).toBe('identity');
      expect((await json(response)).error.code).toBe('unsupported_media_type');
    }
    expect((await json(await h.call('GET', '/api/agents'))).total).toBe(0);
    expect(
      (await h.call('POST', '/api/agents', { json: agentInput, headers: { 'Content-Encoding': 'Identity' } })).status,
    ).toBe(201);
  });

  it('isIdentityEncoding accepts only no coding or identity', () => {
    expect([undefined, '', 'identity', ' IDENTITY '].map(isIdentityEncoding)).toEqual([true, true, true, true]);
    expect(['gzip', 'deflate', 'identity,br'].map(isIdentityEncoding)).toEqual([false, false, false]);
  });

  it('a body over the limit by Content-Length is 413 payload_too_large', async () => {
    const h = await harness({ bodyLimitBytes: 64 });
    const body = JSON.stringify({ ...agentInput, description: 'x'.repeat(100) });
    const response = await h.call('POST', '/api/agents', {
      raw: body,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
    });
    expect(response.status).toBe(413);
    expect((await json(response)).error).toMatchObject({ code: 'payload_too_large', details: { limitBytes: 64 } });
    // Decided from the header alone, before any byte is read.
    const declared = await h.call('POST', '/api/agents', {
      raw: '{}',
      headers: { 'Content-Type': 'application/json', 'Content-Length': '4096' },
    });
    expect(declared.status).toBe(413);
  });

  it('a chunked body without Content-Length is counted as it streams: 413 past the limit', async () => {
    const h = await harness({ bodyLimitBytes: 1024 });
    const response = await h.call('POST', '/api/agents', {
      raw: chunked(10, 200),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect((await json(response)).error.code).toBe('payload_too_large');
  });

  it('a chunked body within the limit is read', async () => {
    const h = await harness({ bodyLimitBytes: 1024 });
    const bytes = new TextEncoder().encode(JSON.stringify(agentInput));
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10));
        controller.close();
      },
    });
    const response = await h.call('POST', '/api/agents', {
      raw: stream,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(201);
  });

  it.each([
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/json; charset=iso-8859-1', 415],
    ['application/merge-patch+json', 415],
    ['application/json; charset=utf-8', 201],
    ['Application/JSON;charset="UTF-8"', 201],
  ])('Content-Type %s → %i', async (contentType, status) => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', {
      raw: JSON.stringify(agentInput),
      headers: { 'Content-Type': contentType },
    });
    expect(response.status).toBe(status);
    if (status === 415) expect((await json(response)).error.code).toBe('unsupported_media_type');
  });

  it('a non-empty body without Content-Type is 415', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', { raw: new Blob([JSON.stringify(agentInput)]) });
    expect(response.status).toBe(415);
  });

  it.each([['{"name": '], ['{name: "x"}'], ['   ']])(
    'malformed JSON %j is 400 invalid_request without echoing it',
    async (raw) => {
      const h = await harness();
      const response = await h.call('POST', '/api/agents', { raw, headers: { 'Content-Type': 'application/json' } });
      expect(response.status).toBe(400);
      const { error } = await json(response);
      expect(error).toEqual({ code: 'invalid_request', message: 'The request body is not valid JSON.' });
    },
  );

  it('invalid UTF-8 is 400 invalid_request', async () => {
    const h = await harness();
    const response = await h.call('POST', '/api/agents', {
      raw: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]),
      headers: { 'Content-Type': 'application/json' },
    });
    expect((await json(response)).error.code).toBe('invalid_request');
  });

  it('an empty body is a missing body: 400 validation_failed', async () => {
    const h = await harness();
    const response = await h.call('PATCH', '/api/conversations/conv_x', {
      raw: '',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.code).toBe('validation_failed');
  });

  it('isJsonMediaType accepts application/json with utf-8 or no charset only', () => {
    expect(isJsonMediaType('application/json')).toBe(true);
    expect(isJsonMediaType('application/json; charset=UTF-8; foo=bar')).toBe(true);
    expect(isJsonMediaType('application/json; charset=utf-16')).toBe(false);
    expect(isJsonMediaType('text/json')).toBe(false);
    expect(isJsonMediaType(undefined)).toBe(false);
  });
});
