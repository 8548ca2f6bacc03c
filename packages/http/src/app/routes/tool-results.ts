/** @module `POST /conversations/:id/tool-results`: answering the tool calls a paused reply waits for (docs/replies-and-streams.md#tools). */
import { ToolResultsAcceptedSchema, ToolResultsSchema, type Core } from '@parley/core';
import { Hono } from 'hono';
import type { ParleyEnv } from '../env.js';
import { idPath } from '../openapi/operation.js';
import { endpoints, type BodyReader } from './endpoint.js';
import { json } from '../response.js';

/** The tool-results route, to be mounted at `/api/conversations` behind authentication. */
export function toolResultRoutes(core: Core, body: BodyReader): Hono<ParleyEnv> {
  const endpoint = endpoints(body);
  return new Hono<ParleyEnv>().post(
    '/:id/tool-results',
    ...endpoint(
      {
        operationId: 'submitToolResults',
        summary: 'Answer the tool calls a paused reply waits for',
        description:
          'Answers calls listed in the conversation\'s `pendingToolCalls` (and in the `reply.requires_action` event): `{toolCallId, output}` for a client tool, `{toolCallId, approved, reason?}` for a call that requires approval. Once every call of the step is answered the reply resumes on a worker: an approved webhook tool is called, a rejected call gives the model `{"error": "rejected", "reason": …}`. Answers the calls still waiting.',
        tag: 'Messages',
        scope: 'conversations:write',
        path: idPath('conversation', 'conv_'),
        body: ToolResultsSchema,
        success: {
          status: 202,
          description: 'The answers were kept; the reply resumes once none is waiting.',
          schema: ToolResultsAcceptedSchema,
        },
        errors: {
          404: "No conversation with this id in the key's workspace.",
          409: '`conflict`: a call is not waiting for an answer (unknown or already answered), or the conversation is completed.',
        },
      },
      async ({ scope, params, body }, c) => json(c, await core.replies.submitToolResults(scope, params.id, body), 202),
    ),
  );
}
