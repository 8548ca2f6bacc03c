/**
 * @module Real responses against the document: for every operation, successes and errors have a
 * documented status, a body of the documented schema and the documented header fields.
 */
import type { OpenAPIV3_1 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { memoryAdapters } from '@parley/adapter-memory';
import { startReceiver } from '@parley/core/testing';
import { agentInput, harness, json, type CallInit } from '../../test-support/harness.js';
import { fetchDocument, operation, operationsOf, schemaValidator } from '../../test-support/openapi.js';

describe('responses conform to /openapi.json', () => {
  it('for every operation, successes and errors alike', async () => {
    // Private targets allowed: the test event goes to a receiver on loopback.
    const h = await harness({ bodyLimitBytes: 4096 }, memoryAdapters(), { allowPrivateWebhookUrls: true });
    const document = await fetchDocument(h.app);
    const validate = schemaValidator(document);
    const exercised = new Set<string>();
    const problems: string[] = [];

    /** Calls `path` (an instance of `template`) and checks the response against the document. */
    async function call(method: string, template: string, path: string, init: CallInit = {}, expected?: number) {
      const response = await h.call(method, path, init);
      const name = `${method} ${template} → ${response.status}`;
      exercised.add(`${method} ${template}`);
      if (expected !== undefined && response.status !== expected) problems.push(`${name}: expected ${expected}`);
      const documented = operation(document, method, template).responses?.[response.status] as
        OpenAPIV3_1.ResponseObject | undefined;
      if (!documented) {
        problems.push(`${name}: status not documented`);
        return response;
      }
      for (const [header, ref] of Object.entries(documented.headers ?? {})) {
        const definition = document.components?.headers?.[
          (ref as OpenAPIV3_1.ReferenceObject).$ref.split('/').pop()!
        ] as OpenAPIV3_1.HeaderObject;
        if (definition.required && !response.headers.has(header)) problems.push(`${name}: no ${header} header`);
      }
      const schema = documented.content?.['application/json']?.schema;
      if (schema) {
        for (const failure of validate(schema, await response.clone().json())) problems.push(`${name}: ${failure}`);
      } else if (!documented.content && (await response.clone().text()) !== '') {
        problems.push(`${name}: a body where none is documented`);
      }
      return response;
    }

    const agent = await json(
      await call('POST', '/api/agents', '/api/agents', { json: { ...agentInput, configuration: { a: 1 } } }, 201),
    );
    await call('GET', '/api/agents', '/api/agents?limit=5', {}, 200);
    await call('GET', '/api/agents/{id}', `/api/agents/${agent.id}`, {}, 200);
    await call(
      'PATCH',
      '/api/agents/{id}',
      `/api/agents/${agent.id}`,
      { json: { temperature: null, maxTokens: 9 } },
      200,
    );
    const conversation = await json(
      await call('POST', '/api/conversations', '/api/conversations', { json: { agentId: agent.id } }, 201),
    );
    await call('GET', '/api/conversations', `/api/conversations?agentId=${agent.id}`, {}, 200);
    await call('GET', '/api/conversations/{id}', `/api/conversations/${conversation.id}`, {}, 200);
    for (const role of ['user', 'assistant', 'system']) {
      await call(
        'POST',
        '/api/conversations/{id}/messages',
        `/api/conversations/${conversation.id}/messages`,
        { json: { role, content: role } },
        201,
      );
    }
    const page = await json(
      await call(
        'GET',
        '/api/conversations/{id}/messages',
        `/api/conversations/${conversation.id}/messages?limit=2`,
        {},
        200,
      ),
    );
    await call(
      'GET',
      '/api/conversations/{id}/messages',
      `/api/conversations/${conversation.id}/messages?before=${page.nextCursor}`,
      {},
      200,
    );
    // No models configured: the agent's model has no language model.
    await call('POST', '/api/conversations/{id}/reply', `/api/conversations/${conversation.id}/reply`, {}, 409);
    // Nothing to stop.
    await call(
      'POST',
      '/api/conversations/{id}/reply/cancel',
      `/api/conversations/${conversation.id}/reply/cancel`,
      {},
      200,
    );
    await call('POST', '/api/conversations/{id}/reply/cancel', '/api/conversations/conv_nope/reply/cancel', {}, 404);
    await call(
      'GET',
      '/api/conversations/{id}/messages/{messageId}',
      `/api/conversations/${conversation.id}/messages/${page.messages[0].id}`,
      {},
      200,
    );
    // Nothing is pending: an answer names a call no reply waits for.
    await call(
      'POST',
      '/api/conversations/{id}/tool-results',
      `/api/conversations/${conversation.id}/tool-results`,
      { json: { results: [{ toolCallId: 'call_1', output: 1 }] } },
      409,
    );
    // The AI SDK's chat protocol: no model to reply, a body that is not the protocol's, nothing to resume.
    const chat = { id: conversation.id, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] };
    await call('POST', '/api/chat', '/api/chat', { json: chat }, 409);
    await call('POST', '/api/chat', '/api/chat', { json: { id: conversation.id } }, 400);
    await call('GET', '/api/chat/{id}/stream', `/api/chat/${conversation.id}/stream`, {}, 204);
    await call('GET', '/api/chat/{id}/stream', '/api/chat/conv_nope/stream', {}, 404);
    await call(
      'GET',
      '/api/conversations/{id}/messages/{messageId}',
      `/api/conversations/${conversation.id}/messages/msg_nope`,
      {},
      404,
    );
    await call(
      'PATCH',
      '/api/conversations/{id}',
      `/api/conversations/${conversation.id}`,
      { json: { status: 'completed' } },
      200,
    );
    // A completed conversation's stream sends its messages and the end, then closes.
    const stream = await call(
      'GET',
      '/api/conversations/{id}/stream',
      `/api/conversations/${conversation.id}/stream`,
      {},
      200,
    );
    if (!(await stream.text()).includes('event: conversation.completed'))
      problems.push('GET /api/conversations/{id}/stream: no end event');
    await call(
      'GET',
      '/api/conversations/{id}/stream',
      `/api/conversations/${conversation.id}/stream?after=forged`,
      {},
      400,
    );
    const webhook = await json(
      await call(
        'POST',
        '/api/webhooks',
        '/api/webhooks',
        { json: { url: 'https://example.com/h', events: ['message.sent'] } },
        201,
      ),
    );
    await call('GET', '/api/webhooks', '/api/webhooks', {}, 200);
    await call('GET', '/api/webhooks/{id}', `/api/webhooks/${webhook.id}`, {}, 200);
    const receiver = await startReceiver();
    const delivering = await json(
      await call(
        'POST',
        '/api/webhooks',
        '/api/webhooks',
        { json: { url: receiver.url, events: ['agent.created'] } },
        201,
      ),
    );
    const tested = await json(
      await call(
        'POST',
        '/api/webhooks/{id}/test',
        `/api/webhooks/${delivering.id}/test`,
        { json: { eventType: 'agent.created' } },
        200,
      ),
    );
    await call('GET', '/api/webhooks/{id}/deliveries', `/api/webhooks/${delivering.id}/deliveries?limit=1`, {}, 200);
    await call(
      'POST',
      '/api/webhooks/{id}/recover',
      `/api/webhooks/${delivering.id}/recover`,
      { json: { since: new Date(0).toISOString() } },
      202,
    );
    await call(
      'POST',
      '/api/webhooks/{id}/deliveries/{deliveryId}/retry',
      `/api/webhooks/${delivering.id}/deliveries/${tested.id}/retry`,
      {},
      404,
    );
    await call('POST', '/api/webhooks/{id}/rotate-secret', `/api/webhooks/${delivering.id}/rotate-secret`, {}, 200);
    await receiver.close();
    await call('GET', '/api/usage', '/api/usage?groupBy=agent', {}, 200);
    await call('GET', '/api/usage', '/api/usage?from=2026-02-30', {}, 400);
    await call('GET', '/api/key', '/api/key', {}, 200);
    await call('GET', '/api/key', '/api/key', { key: null }, 401);
    const events = await json(await call('GET', '/api/events', '/api/events?limit=1', {}, 200));
    await call('GET', '/api/events/{id}', `/api/events/${events.events[0].id}`, {}, 200);
    await call('GET', '/api/events/{id}', '/api/events/evt_nope', {}, 404);
    await call('PATCH', '/api/webhooks/{id}', `/api/webhooks/${webhook.id}`, { json: { enabled: false } }, 200);
    await call(
      'POST',
      '/api/webhooks/{id}/recover',
      `/api/webhooks/${webhook.id}/recover`,
      { json: { since: new Date(0).toISOString() } },
      409,
    );
    await call('DELETE', '/api/webhooks/{id}', `/api/webhooks/${webhook.id}`, {}, 200);
    await call('GET', '/sandbox/plants', '/sandbox/plants?limit=2', {}, 200);
    await call('POST', '/sandbox/plants', '/sandbox/plants', { json: { id: 42, name: 'Fern' } }, 200);
    await call('DELETE', '/sandbox/plants/{id}', '/sandbox/plants/42', {}, 204);
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs'])
      await call('GET', path, path, { key: null }, 200);

    // Errors, in both shapes.
    await call('GET', '/api/agents', '/api/agents', { key: null }, 401);
    await call('GET', '/api/agents', '/api/agents', { key: await h.keyWith(['conversations:read']) }, 403);
    await call('GET', '/api/agents', '/api/agents?limit=0', {}, 400);
    await call(
      'POST',
      '/api/agents',
      '/api/agents',
      { raw: '{', headers: { 'Content-Type': 'application/json' } },
      400,
    );
    await call('POST', '/api/agents', '/api/agents', { json: { ...agentInput, description: 'x'.repeat(5000) } }, 413);
    await call('POST', '/api/agents', '/api/agents', { raw: 'hi', headers: { 'Content-Type': 'text/plain' } }, 415);
    await call(
      'POST',
      '/api/conversations/{id}/messages',
      `/api/conversations/${conversation.id}/messages`,
      { json: { role: 'user', content: 'late' } },
      409,
    );
    await call(
      'GET',
      '/api/conversations/{id}/messages',
      `/api/conversations/${conversation.id}/messages?before=forged`,
      {},
      400,
    );
    await call('DELETE', '/api/conversations/{id}', `/api/conversations/${conversation.id}`, {}, 200);
    await call('DELETE', '/api/conversations/{id}', `/api/conversations/${conversation.id}`, {}, 404);
    await call('DELETE', '/api/agents/{id}', `/api/agents/${agent.id}`, {}, 200);
    await call('GET', '/api/agents/{id}', `/api/agents/${agent.id}`, {}, 404);
    await call('GET', '/sandbox/plants', '/sandbox/plants?limit=-1', {}, 400);
    await call('GET', '/sandbox/plants', '/sandbox/plants', { key: null }, 401);
    await call('DELETE', '/sandbox/plants/{id}', '/sandbox/plants/999', {}, 404);
    const { key: limited } = await h.core.apiKeys.issue({ workspaceId: 'ws9', plan: 'enterprise', limitPerHour: 1 });
    await call('GET', '/api/webhooks', '/api/webhooks', { key: limited }, 200);
    await call('GET', '/api/webhooks', '/api/webhooks', { key: limited }, 429);

    expect(problems).toEqual([]);
    const unexercised = operationsOf(document).filter((name) => !exercised.has(name) && !name.startsWith('GET /docs/'));
    expect(unexercised).toEqual([]);
  });
});
