/**
 * @module A fake OpenAI-compatible Chat Completions server on loopback (`POST /v1/chat/completions`,
 * streaming SSE or one JSON answer) that records every request and answers from a script. Not built.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the server received: the parsed JSON body and the `Authorization` header; `aborted` turns
 * true when the client closed the connection before the answer was complete (a cancelled generation).
 */
export interface ChatRequest {
  aborted: boolean;
  body: {
    model: string;
    messages: Array<{ role: string; content: unknown }>;
    temperature?: number;
    max_tokens?: number;
    stream?: boolean;
    [key: string]: unknown;
  };
  authorization: string | undefined;
}

/**
 * One scripted answer: an HTTP error `status` (with an OpenAI-style error body), or the `deltas`
 * of the reply (streamed one SSE chunk each, with `delayMs` between chunks), its finish reason and
 * usage. `hold` is awaited before the first byte of a 200 answer. `toolCalls` are streamed after
 * the deltas as Chat Completions does: per call, a first chunk with its `index`, `id`, `type` and
 * `function.name`, then its `function.arguments` JSON in fragments of a few characters; the finish
 * reason then defaults to `tool_calls` (and `deltas` to none).
 */
export interface ChatAnswer {
  status?: number;
  /** The `error.message` of an HTTP error's body (default `scripted failure <status>`). */
  errorMessage?: string;
  deltas?: string[];
  toolCalls?: Array<{ id: string; name: string; arguments: object }>;
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  delayMs?: number;
  hold?: Promise<unknown>;
  /** After streaming `afterDeltas` of the deltas, waits for `until` before the rest (a reply paused mid-stream). */
  pause?: { afterDeltas: number; until: Promise<unknown> };
}

/** A running fake server. */
export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1`, the `baseURL` to configure. */
  baseURL: string;
  requests: ChatRequest[];
  /** Sets how the next requests are answered: in order, the last one repeating. */
  script(answers: ChatAnswer[] | ((request: ChatRequest, index: number) => ChatAnswer)): void;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<ChatRequest['body']> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answer(response: ServerResponse, body: ChatRequest['body'], reply: ChatAnswer): Promise<void> {
  if (reply.status !== undefined && reply.status >= 400) {
    response.writeHead(reply.status, { 'content-type': 'application/json' });
    const message = reply.errorMessage ?? `scripted failure ${reply.status}`;
    response.end(JSON.stringify({ error: { message, type: 'server_error' } }));
    return;
  }
  if (reply.hold) await reply.hold;
  const toolCalls = reply.toolCalls ?? [];
  const deltas = reply.deltas ?? (toolCalls.length > 0 ? [] : ['Hello', ' there']);
  const usage = reply.usage ?? { prompt_tokens: 11, completion_tokens: deltas.length + toolCalls.length };
  const finish = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const base = { id: 'chatcmpl-fake', created: 1_700_000_000, model: body.model };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: deltas.join('') }, finish_reason: finish }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (chunk: unknown) => response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  send({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
  });
  for (const [index, delta] of deltas.entries()) {
    if (reply.pause && index === reply.pause.afterDeltas) await reply.pause.until;
    if (reply.delayMs) await sleep(reply.delayMs);
    if (response.destroyed) return;
    send({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: delta }, finish_reason: null }],
    });
  }
  for (const [index, call] of toolCalls.entries()) {
    const chunk = (toolCall: object) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { tool_calls: [{ index, ...toolCall }] }, finish_reason: null }],
    });
    send(chunk({ id: call.id, type: 'function', function: { name: call.name, arguments: '' } }));
    const json = JSON.stringify(call.arguments);
    for (let at = 0; at < json.length; at += 5) {
      if (reply.delayMs) await sleep(reply.delayMs);
      send(chunk({ function: { arguments: json.slice(at, at + 5) } }));
    }
  }
  send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  send({
    ...base,
    object: 'chat.completion.chunk',
    choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
  response.end('data: [DONE]\n\n');
}

/** Starts a fake Chat Completions server on 127.0.0.1 (a free port); it answers `Hello there` until scripted. */
export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: ChatRequest[] = [];
  let plan: ChatAnswer[] | ((request: ChatRequest, index: number) => ChatAnswer) = [{}];
  const server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404).end();
        return;
      }
      const recorded: ChatRequest = {
        body: await readJson(request),
        authorization: request.headers.authorization,
        aborted: false,
      };
      response.once('close', () => {
        if (!response.writableFinished) recorded.aborted = true;
      });
      const index = requests.push(recorded) - 1;
      const reply = typeof plan === 'function' ? plan(recorded, index) : (plan[Math.min(index, plan.length - 1)] ?? {});
      await answer(response, recorded.body, reply);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script(answers) {
      plan = answers;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
