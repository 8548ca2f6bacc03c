/**
 * @module An agent's MCP tools in a reply (docs/mcp.md): the tools the model sees (`<label>__<tool>`,
 * filtered by `allowedTools`), which calls wait for approval, and a call's result as the model and
 * the stored `tool` message get it.
 */
import type { ModelTool } from '../../ports/language-model.js';
import type { WorkspaceScope } from '../../ports/scope.js';
import type { AgentRecord, JsonObject, McpServer, ToolCall } from '../../types.js';
import { storableJson, storableText } from '../../validation.js';
import { errorResult, MAX_TOOL_RESULT_CHARS } from '../tool-calls.js';
import { McpFailure, type McpCallResult, type McpClients, type McpTarget } from './mcp-clients.js';

/** The name the model sees for tool `name` of the MCP server labelled `server`. */
export const mcpToolName = (server: string, name: string): string => `${server}__${name}`;

/** A tool name providers accept (OpenAI's function names): MCP tools whose `<label>__<tool>` is not one are left out. */
const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Largest serialized input schema handed to the model, in characters. */
const MAX_INPUT_SCHEMA_CHARS = 64 * 1024;
/** Largest tool description handed to the model, in characters (longer ones are cut). */
const MAX_DESCRIPTION_CHARS = 4_096;
/** Largest error text of an `isError` result kept, in characters. */
const MAX_ERROR_CHARS = 10_000;

/** The MCP tools of one reply step: what the model is offered, and which server and tool each name stands for. */
export interface AgentMcpTools {
  tools: ModelTool[];
  /** By the name the model sees: the server's label and the tool's name there. */
  targets: Map<string, { server: string; name: string }>;
  /** Tools left out, with why (for the log): a name providers refuse, a schema that is not an object's, a clash. */
  skipped: Array<{ server: string; tool: string; reason: string }>;
}

/** The server `label` of `agent` with its header values, ready to connect to. */
export function mcpTarget(agent: AgentRecord, server: McpServer): McpTarget {
  return { label: server.label, url: server.url, headers: agent.mcpHeaders?.[server.label] ?? {} };
}

/** Whether a call of `tool` on `server` waits for approval (`requireApproval`, default `always`). */
export function mcpNeedsApproval(server: McpServer, tool: string): boolean {
  const policy = server.requireApproval ?? 'always';
  if (policy === 'always') return true;
  if (policy === 'never') return false;
  return !policy.never.includes(tool);
}

/**
 * The MCP tools `agent`'s model is offered: every server's tools (lists cached up to 60 s), those of
 * `allowedTools` only when it is set, named `<label>__<tool>`, with the server's input JSON Schema.
 * A name taken by one of `reserved` (the agent's own tools) stays the agent tool's.
 * @throws McpFailure when a server cannot list its tools (its message names the server)
 */
export async function agentMcpTools(
  clients: McpClients,
  scope: WorkspaceScope,
  agent: AgentRecord,
  options: { reserved: ReadonlySet<string>; signal?: AbortSignal },
): Promise<AgentMcpTools> {
  const result: AgentMcpTools = { tools: [], targets: new Map(), skipped: [] };
  const servers = agent.mcpServers ?? [];
  const lists = await Promise.all(
    servers.map(async (server) => {
      try {
        return await clients.listTools(scope, mcpTarget(agent, server), { signal: options.signal });
      } catch (error) {
        const message = error instanceof McpFailure ? error.message : 'The MCP server could not be used.';
        throw new McpFailure(
          error instanceof McpFailure ? error.kind : 'unreachable',
          `The MCP server '${server.label}' could not list its tools: ${message}`,
        );
      }
    }),
  );
  servers.forEach((server, index) => {
    const allowed = server.allowedTools === undefined ? null : new Set(server.allowedTools);
    for (const tool of lists[index]!) {
      if (allowed && !allowed.has(tool.name)) continue;
      const name = mcpToolName(server.label, tool.name);
      const skip = (reason: string) => result.skipped.push({ server: server.label, tool: tool.name, reason });
      if (!MODEL_TOOL_NAME.test(name)) skip(`'${name}' is not a tool name models accept`);
      else if (options.reserved.has(name) || result.targets.has(name)) skip(`'${name}' is taken by another tool`);
      else if (!isObjectSchema(tool.inputSchema)) skip('its input schema is not a JSON Schema of an object');
      else {
        result.targets.set(name, { server: server.label, name: tool.name });
        result.tools.push({
          name,
          description: storableText(tool.description.slice(0, MAX_DESCRIPTION_CHARS)),
          parameters: storableJson(tool.inputSchema),
        });
      }
    }
  });
  return result;
}

function isObjectSchema(schema: unknown): schema is JsonObject {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return false;
  if ((schema as JsonObject).type !== 'object') return false;
  return JSON.stringify(schema).length <= MAX_INPUT_SCHEMA_CHARS;
}

/**
 * Makes an MCP tool call of `agent` (its `server` and `name`) and resolves with the result as the
 * `tool` message stores it: the result's `structuredContent` as JSON when present, else its text
 * parts joined; `{"error": …}` for an `isError` result, a failure (unreachable, refused, timed out,
 * HTTP error, not MCP), a server or tool the agent no longer has, or a result longer than a
 * message may be. Never rejects.
 */
export async function callMcpTool(
  clients: McpClients,
  scope: WorkspaceScope,
  agent: AgentRecord,
  call: ToolCall,
  options: { signal?: AbortSignal } = {},
): Promise<string> {
  const server = (agent.mcpServers ?? []).find((entry) => entry.label === call.server);
  if (!server) return errorResult(`The agent has no MCP server labelled '${call.server}'.`);
  if (server.allowedTools !== undefined && !server.allowedTools.includes(call.name))
    return errorResult(`The tool '${call.name}' of MCP server '${server.label}' is not allowed.`);
  try {
    const result = await clients.callTool(
      scope,
      mcpTarget(agent, server),
      { name: call.name, arguments: call.arguments },
      options,
    );
    return mcpResultText(result);
  } catch (error) {
    return errorResult(error instanceof McpFailure ? error.message : 'The MCP server could not be used.');
  }
}

/**
 * The stored form of an MCP tool result (docs/mcp.md#results): `isError` → `{"error": "<its text>"}`;
 * `structuredContent` → its JSON; else the text parts joined by a line break (other parts — images,
 * audio, resources — are named, not included). Strings are repaired as elsewhere (U+0000 and
 * unpaired surrogates become U+FFFD). A result over {@link MAX_TOOL_RESULT_CHARS} is an error.
 */
export function mcpResultText(result: McpCallResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts = content.map((part) =>
    part.type === 'text' && typeof part.text === 'string' ? part.text : `[${String(part.type)} content left out]`,
  );
  if (result.isError) {
    const text = parts.join('\n').trim();
    return errorResult(storableText(text === '' ? 'The tool failed.' : text.slice(0, MAX_ERROR_CHARS)));
  }
  const stored =
    result.structuredContent !== undefined && result.structuredContent !== null
      ? JSON.stringify(storableJson(result.structuredContent))
      : storableText(parts.join('\n'));
  return stored.length > MAX_TOOL_RESULT_CHARS
    ? errorResult(`The MCP tool's result is longer than ${MAX_TOOL_RESULT_CHARS} characters.`)
    : stored;
}
