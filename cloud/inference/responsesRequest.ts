/**
 * Reads an OpenAI Responses API request (`POST /v1/responses`) by translating it into the Chat
 * Completions request it means and reading that with parseChatRequest, so both APIs validate,
 * refuse and generate alike. Errors name the Responses field (`max_output_tokens`, `input`, ...).
 *
 * Stateless: nothing is stored, so `previous_response_id` (and `store: true` retrieval,
 * `conversation`, background mode) is refused with a 400 naming it.
 */
import { parseChatRequest, requireJsonObject, type ChatRequest } from "./openaiRequest.js";
import { InferenceError } from "./types.js";

export interface ResponsesRequest {
  chat: ChatRequest;
  /** Echoed in the response object, as OpenAI echoes them. */
  echo: {
    instructions: string | null;
    maxOutputTokens: number | null;
    temperature: number;
    topP: number;
    text: { format: Record<string, unknown> };
    toolChoice: unknown;
    tools: unknown[];
    parallelToolCalls: boolean;
    metadata: Record<string, unknown>;
  };
}

/** Responses fields that exist only for state or features this endpoint does not keep. */
const REFUSED: Record<string, string> = {
  previous_response_id: "previous_response_id is not supported: responses are not stored; send the whole conversation in input",
  conversation: "conversation is not supported: responses are not stored; send the whole conversation in input",
  background: "background responses are not supported",
  prompt: "prompt templates are not supported",
};

/** Fields read here or accepted with no effect (bookkeeping we do not keep). */
const KNOWN = new Set([
  "model",
  "input",
  "instructions",
  "max_output_tokens",
  "temperature",
  "top_p",
  "text",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "stream",
  "store",
  "metadata",
  "user",
  "truncation",
  "include",
  "service_tier",
  "reasoning",
  "max_tool_calls",
  "safety_identifier",
  "prompt_cache_key",
  "stream_options",
]);

/** Chat Completions field → the Responses field a client should be told about. */
const PARAM_NAMES: Record<string, string> = { messages: "input", max_tokens: "max_output_tokens", response_format: "text.format" };

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const b = requireJsonObject(body);
  for (const [field, message] of Object.entries(REFUSED)) if (present(b[field])) throw invalid(message, field);
  const instructions = present(b.instructions) ? stringField(b.instructions, "instructions") : null;
  const messages = [...(instructions !== null ? [{ role: "system", content: instructions }] : []), ...inputMessages(b.input)];
  const format = textFormat(b.text);
  const tools = present(b.tools) ? functionTools(b.tools) : undefined;
  const chatBody: Record<string, unknown> = {
    messages,
    max_tokens: b.max_output_tokens,
    temperature: b.temperature,
    top_p: b.top_p,
    response_format: format,
    tools,
    tool_choice: b.tool_choice,
    parallel_tool_calls: b.parallel_tool_calls,
    stream: b.stream,
  };
  let chat: ChatRequest;
  try {
    chat = parseChatRequest(chatBody);
  } catch (err) {
    throw err instanceof InferenceError ? renamed(err) : err;
  }
  chat.ignored = Object.keys(b).filter((k) => !KNOWN.has(k));
  return {
    chat,
    echo: {
      instructions,
      maxOutputTokens: (b.max_output_tokens as number | undefined) ?? null,
      temperature: (b.temperature as number | undefined) ?? 0,
      topP: (b.top_p as number | undefined) ?? 1,
      text: { format: (b.text as { format?: Record<string, unknown> } | undefined)?.format ?? { type: "text" } },
      toolChoice: b.tool_choice ?? "auto",
      tools: Array.isArray(b.tools) ? b.tools : [],
      parallelToolCalls: b.parallel_tool_calls !== false,
      metadata: (b.metadata as Record<string, unknown> | undefined) ?? {},
    },
  };
}

/** `input`: a string (one user message) or a list of message, function_call and function_call_output items. */
function inputMessages(input: unknown): Record<string, unknown>[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (!Array.isArray(input) || input.length === 0) throw invalid("input must be a string or a non-empty array of items", "input");
  const messages: Record<string, unknown>[] = [];
  input.forEach((raw, i) => {
    const item = raw as Record<string, unknown>;
    if (!item || typeof item !== "object") throw invalid(`input[${i}] must be an object`, "input");
    const type = item.type ?? "message";
    if (type === "message") {
      messages.push({ role: item.role, content: messageText(item.content, i) });
    } else if (type === "function_call") {
      const call = { id: String(item.call_id ?? ""), type: "function", function: { name: item.name, arguments: item.arguments } };
      // Consecutive calls belong to one assistant turn, as Chat Completions writes them.
      const last = messages[messages.length - 1];
      if (last?.role === "assistant" && Array.isArray(last.tool_calls)) (last.tool_calls as unknown[]).push(call);
      else messages.push({ role: "assistant", content: "", tool_calls: [call] });
    } else if (type === "function_call_output") {
      const output = typeof item.output === "string" ? item.output : JSON.stringify(item.output ?? "");
      messages.push({ role: "tool", tool_call_id: item.call_id, content: output });
    } else {
      throw invalid(`input[${i}]: items of type ${JSON.stringify(type)} are not supported (message, function_call and function_call_output are)`, "input");
    }
  });
  return messages;
}

function messageText(content: unknown, i: number): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`input[${i}].content must be a string or an array of text parts`, "input");
  return content
    .map((part, j) => {
      const p = part as { type?: unknown; text?: unknown };
      if (!["input_text", "output_text", "text"].includes(p?.type as string) || typeof p.text !== "string") {
        throw invalid(`input[${i}].content[${j}] must be a text part (input_text or output_text); images and files are not supported`, "input");
      }
      return p.text;
    })
    .join("");
}

/** `text.format` → Chat Completions' `response_format`. */
function textFormat(text: unknown): Record<string, unknown> | undefined {
  if (!present(text)) return undefined;
  const format = (text as { format?: Record<string, unknown> }).format;
  if (!present(format)) return undefined;
  if (typeof format !== "object") throw invalid("text.format must be an object", "text.format");
  if (format.type === "json_schema") return { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: format.strict } };
  return format;
}

/** Responses tools are flat (`{type: "function", name, parameters}`); Chat Completions nests them. */
function functionTools(tools: unknown): unknown[] {
  if (!Array.isArray(tools)) throw invalid("tools must be an array", "tools");
  return tools.map((tool, i) => {
    const t = tool as { type?: unknown; name?: unknown; description?: unknown; parameters?: unknown };
    if (t?.type !== "function") throw invalid(`tools[${i}]: only function tools are supported (not ${JSON.stringify(t?.type)})`, "tools");
    return { type: "function", function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined } };
  });
}

function renamed(err: InferenceError): InferenceError {
  const param = err.extra.param;
  if (!param) return err;
  const base = param.replace(/\[.*$/, "");
  const name = PARAM_NAMES[base] ?? param;
  // "max_tokens must be ..." is about max_output_tokens here. An indexed message field keeps its
  // text: with instructions in front, its index would not be the client's.
  const message = base === param && err.message.startsWith(`${param} `) ? name + err.message.slice(param.length) : err.message;
  return new InferenceError(err.status, err.code, message, { ...err.extra, param: name });
}

function stringField(value: unknown, param: string): string {
  if (typeof value !== "string") throw invalid(`${param} must be a string`, param);
  return value;
}

const present = (value: unknown) => value !== undefined && value !== null;
const invalid = (message: string, param: string | undefined) => new InferenceError(400, "invalid_request", message, { param });
