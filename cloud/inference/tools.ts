/**
 * OpenAI function calling on llama.cpp, for models whose chat template knows nothing of tools
 * (every svc model: its template has system, user and assistant turns only).
 *
 * The rule (README "OpenAI compatibility", docs/decisions/0008-tool-calls-by-grammar.md):
 * - A call is written by the model as `<tool_call>{"name": ..., "arguments": {...}}`, and a
 *   grammar built from the offered functions' JSON-schema `parameters` makes it valid:
 *   `required` or a named function: the output must be such a call (of that function);
 *   `auto`: either plain text (which cannot begin with `<`) or the marker and a call;
 *   `none`: unconstrained text.
 * - The conversation is rendered as text the template can carry: an assistant message that
 *   called tools becomes an assistant turn holding the same `<tool_call>` text, a `tool`
 *   message becomes a user turn `<tool_response>...</tool_response>`. The tool definitions are
 *   not written into the prompt: svc models have a 160-token window and were not trained on
 *   them; the grammar alone carries the schema.
 * - The generated text is read back into a `tool_call` event (arguments re-serialised as compact
 *   JSON) with finish reason `tool_calls`; a call cut short by `max_tokens` is returned as the
 *   text it is, with finish reason `length`.
 */
import { randomBytes } from "node:crypto";
import { unsupportedSchemaPart } from "../../engine/infer/json-schema-support.js";
import {
  InferenceError,
  type ChatCall,
  type ChatMessage,
  type ChatParams,
  type ChatStream,
  type ConversationMessage,
  type FunctionTool,
  type ToolCall,
  type ToolRequest,
} from "./types.js";

export const TOOL_CALL_MARKER = "<tool_call>";
/** A call is a few dozen tokens of JSON; the engine's default of 128 may cut it. */
const TOOL_CALL_MIN_TOKENS = 256;

export function toolCallId(): string {
  return `call_${randomBytes(12).toString("base64url")}`;
}

/** Reads `tools`, `tool_choice` and `parallel_tool_calls` of a Chat Completions request. */
export function parseTools(b: Record<string, unknown>): ToolRequest | undefined {
  const present = (v: unknown) => v !== undefined && v !== null;
  if (!present(b.tools) || (Array.isArray(b.tools) && b.tools.length === 0)) {
    if (present(b.tool_choice) && b.tool_choice !== "none" && b.tool_choice !== "auto") throw invalid("tool_choice needs tools", "tool_choice");
    return undefined;
  }
  if (!Array.isArray(b.tools) || b.tools.length > 128) throw invalid("tools must be an array of up to 128 function tools", "tools");
  const functions = b.tools.map((tool, i) => parseFunction(tool, `tools[${i}]`));
  const names = new Set<string>();
  for (const f of functions) {
    if (names.has(f.name)) throw invalid(`tools: the function name "${f.name}" appears twice`, "tools");
    names.add(f.name);
  }
  if (present(b.parallel_tool_calls) && typeof b.parallel_tool_calls !== "boolean")
    throw invalid("parallel_tool_calls must be a boolean", "parallel_tool_calls");
  return {
    functions,
    choice: parseToolChoice(b.tool_choice, names),
    raw: { tools: b.tools, tool_choice: b.tool_choice ?? undefined, parallel_tool_calls: b.parallel_tool_calls ?? undefined },
  };
}

function parseFunction(tool: unknown, where: string): FunctionTool {
  const t = tool as { type?: unknown; function?: { name?: unknown; description?: unknown; parameters?: unknown } };
  if (!t || typeof t !== "object" || t.type !== "function" || !t.function || typeof t.function !== "object")
    throw invalid(`${where} must be {"type": "function", "function": {...}}`, "tools");
  return functionTool(t.function, `${where}.function`);
}

/** A function definition (Chat Completions' `tools[i].function`, or a flat Responses API tool). */
export function functionTool(f: { name?: unknown; description?: unknown; parameters?: unknown }, where: string): FunctionTool {
  if (typeof f.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(f.name)) throw invalid(`${where}.name must be 1-64 letters, digits, _ or -`, "tools");
  if (f.description !== undefined && typeof f.description !== "string") throw invalid(`${where}.description must be a string`, "tools");
  const parameters = (f.parameters ?? { type: "object", properties: {} }) as Record<string, unknown>;
  const problem = unsupportedSchemaPart(parameters, "parameters");
  if (problem) throw invalid(`${where}.${problem}`, "tools");
  return { name: f.name, ...(f.description ? { description: f.description } : {}), parameters };
}

function parseToolChoice(value: unknown, names: Set<string>): ToolRequest["choice"] {
  if (value === undefined || value === null || value === "auto") return "auto";
  if (value === "none" || value === "required") return value;
  const named = value as { type?: unknown; function?: { name?: unknown }; name?: unknown };
  // Chat Completions: {type: "function", function: {name}}; Responses: {type: "function", name}.
  const name = named?.type === "function" ? (named.function?.name ?? named.name) : undefined;
  if (typeof name !== "string")
    throw invalid('tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}', "tool_choice");
  if (!names.has(name)) throw invalid(`tool_choice names the function "${name}", which is not in tools`, "tool_choice");
  return { name };
}

/** The JSON a call is written as: `{"name": <one of the functions>, "arguments": <its parameters>}`. */
function callSchema(functions: FunctionTool[]): Record<string, unknown> {
  const one = (f: FunctionTool) => ({
    type: "object",
    properties: { name: { const: f.name }, arguments: f.parameters },
    required: ["name", "arguments"],
    additionalProperties: false,
  });
  return functions.length === 1 ? one(functions[0]) : { anyOf: functions.map(one) };
}

/** The conversation as the svc template can carry it (see the rule at the top). */
export function plainMessages(messages: ConversationMessage[]): ChatMessage[] {
  return messages.map((m) => {
    if (m.role === "tool") return { role: "user", content: `<tool_response>${m.content}</tool_response>` };
    if (m.role === "assistant" && m.toolCalls?.length) {
      const calls = m.toolCalls.map((c) => `${TOOL_CALL_MARKER}{"name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments}}`).join("");
      return { role: "assistant", content: m.content + calls };
    }
    return { role: m.role, content: m.content };
  });
}

/** What the llama.cpp worker receives for a call, and how its text becomes tool calls. */
export function localToolPlan(call: ChatCall): { params: ChatParams; decode: (stream: ChatStream) => ChatStream } {
  const { tools, messages, ...rest } = call;
  const params: ChatParams = { ...rest, messages: plainMessages(messages) };
  if (!tools || tools.choice === "none") return { params, decode: (stream) => stream };
  const functions = typeof tools.choice === "object" ? tools.functions.filter((f) => f.name === (tools.choice as { name: string }).name) : tools.functions;
  const schema = callSchema(functions);
  const forced = tools.choice !== "auto";
  params.output = forced ? { type: "json_schema", schema } : { type: "text_or_json_schema", schema, marker: TOOL_CALL_MARKER };
  params.maxTokens = call.maxTokens ?? TOOL_CALL_MIN_TOKENS;
  return { params, decode: (stream) => decodeToolCalls(stream, forced) };
}

/**
 * Text events pass through until the output turns out to be a call (forced: from the start;
 * `auto`: when the first text begins with the marker); a call is collected whole, then parsed.
 */
async function* decodeToolCalls(stream: ChatStream, forced: boolean): ChatStream {
  let mode: "undecided" | "text" | "call" = forced ? "call" : "undecided";
  let collected = "";
  for await (const event of stream) {
    if (event.type === "text") {
      if (mode === "undecided") mode = event.text.startsWith(TOOL_CALL_MARKER[0]) ? "call" : "text";
      if (mode === "text") yield event;
      else collected += event.text;
      continue;
    }
    if (event.type === "done" && mode === "call") {
      const call = readCall(forced ? collected : collected.slice(TOOL_CALL_MARKER.length));
      if (call) {
        yield { type: "tool_call", call };
        yield { ...event, finishReason: "tool_calls" };
      } else {
        // Cut short (max_tokens): the partial call is what the model wrote.
        yield { type: "text", text: collected };
        yield event;
      }
      continue;
    }
    yield event;
  }
}

function readCall(text: string): ToolCall | null {
  try {
    const value = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof value.name !== "string" || !value.arguments || typeof value.arguments !== "object") return null;
    return { id: toolCallId(), name: value.name, arguments: JSON.stringify(value.arguments) };
  } catch {
    return null;
  }
}

const invalid = (message: string, param: string) => new InferenceError(400, "invalid_request", message, { param });
