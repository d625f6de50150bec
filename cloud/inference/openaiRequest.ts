/**
 * Reads an OpenAI chat-completions request body into engine parameters, with 400s that name the
 * offending field (OpenAI's `param`). `model` is ignored: the deployment fixes what answers.
 *
 * Every documented parameter is either honoured or refused with a 400 naming it (the matrix is
 * in README's "OpenAI compatibility"); fields the API does not define are accepted, as vLLM
 * accepts them, and reported back in `ignored` so the caller can see they had no effect.
 */
import { unsupportedSchemaPart } from "../../engine/infer/json-schema-support.js";
import { MAX_TOKENS_LIMIT } from "../../sdk/api/inference.js";
import { parseTools } from "./tools.js";
import { InferenceError, type ChatCall, type ConversationMessage, type OutputConstraint, type ToolCall } from "./types.js";

export interface ChatRequest {
  params: ChatCall;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
  /** `n`: how many answers to generate for the prompt. */
  choices: number;
  /** Top-level fields the API does not define, in request order. */
  ignored: string[];
}

/** Most answers one request may ask for with `n`; each is a full generation. */
export const MAX_CHOICES = 8;
const MAX_LOGIT_BIAS_ENTRIES = 1024;

/** Fields the parser reads, and fields OpenAI defines whose only effect is bookkeeping we don't keep. */
const KNOWN_FIELDS = new Set([
  "messages",
  "model",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "seed",
  "stop",
  "n",
  "stream",
  "stream_options",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "user",
  "metadata",
  "store",
  "service_tier",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "functions",
  "function_call",
  "modalities",
  "audio",
  "prediction",
  "web_search_options",
]);

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * The body as a JSON object, or a 400 saying what is wrong with it. A string is what a body sent
 * as text/plain (or another non-JSON content type) arrives as, JSON or not: say so.
 */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (typeof body === "string") throw invalid("the request body must be sent with content-type: application/json", undefined);
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalid("the request body must be a JSON object", undefined);
  return body as Record<string, unknown>;
}

export function parseChatRequest(body: unknown): ChatRequest {
  const b = requireJsonObject(body);
  const params: ChatCall = { messages: parseMessages(b.messages) };
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) {
    params.maxTokens = integer(maxTokens, b.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens", 1, MAX_TOKENS_LIMIT);
  }
  if (present(b.temperature)) params.temperature = number(b.temperature, "temperature", 0, 2);
  if (b.top_p !== undefined && b.top_p !== null) params.topP = number(b.top_p, "top_p", 0, 1);
  if (b.seed !== undefined && b.seed !== null) params.seed = integer(b.seed, "seed", 0, 2 ** 32 - 1);
  if (b.stop !== undefined && b.stop !== null) params.stop = parseStop(b.stop);
  const choices = present(b.n) ? integer(b.n, "n", 1, MAX_CHOICES) : 1;
  if (present(b.presence_penalty)) params.presencePenalty = number(b.presence_penalty, "presence_penalty", -2, 2);
  if (present(b.frequency_penalty)) params.frequencyPenalty = number(b.frequency_penalty, "frequency_penalty", -2, 2);
  if (present(b.logit_bias)) params.logitBias = parseLogitBias(b.logit_bias);
  if (present(b.logprobs) && typeof b.logprobs !== "boolean") throw invalid("logprobs must be a boolean", "logprobs");
  if (present(b.top_logprobs)) {
    const top = integer(b.top_logprobs, "top_logprobs", 0, 20);
    if (b.logprobs !== true) throw invalid("top_logprobs requires logprobs: true", "top_logprobs");
    params.topLogprobs = top;
  } else if (b.logprobs === true) {
    params.topLogprobs = 0;
  }
  if (present(b.response_format)) params.output = parseResponseFormat(b.response_format);
  refuseUnsupported(b);
  const tools = parseTools(b);
  if (tools) {
    if (params.output && tools.choice !== "none")
      throw invalid("response_format cannot be combined with tools (unless tool_choice is none)", "response_format");
    params.tools = tools;
  }
  if (present(b.stream) && typeof b.stream !== "boolean") throw invalid("stream must be a boolean", "stream");
  const stream = b.stream === true;
  const streamOptions = b.stream_options as { include_usage?: unknown } | undefined | null;
  if (present(streamOptions) && !stream) throw invalid("stream_options is only allowed when stream is true", "stream_options");
  if (present(streamOptions) && (typeof streamOptions !== "object" || Array.isArray(streamOptions)))
    throw invalid("stream_options must be an object", "stream_options");
  return { params, stream, includeUsage: streamOptions?.include_usage === true, choices, ignored: Object.keys(b).filter((k) => !KNOWN_FIELDS.has(k)) };
}

const present = (value: unknown) => value !== undefined && value !== null;

/** OpenAI parameters llama.cpp serving cannot honour: a 400 naming each, never a silent no-op. */
function refuseUnsupported(b: Record<string, unknown>): void {
  if (present(b.functions)) throw invalid("functions are not supported (and deprecated by OpenAI in favour of tools)", "functions");
  if (present(b.function_call)) throw invalid("function_call is not supported", "function_call");
  if (present(b.audio)) throw invalid("audio output is not supported: this model writes text only", "audio");
  if (present(b.modalities) && (!Array.isArray(b.modalities) || b.modalities.some((m) => m !== "text"))) {
    throw invalid('modalities: only ["text"] is supported', "modalities");
  }
  if (present(b.prediction)) throw invalid("predicted outputs are not supported", "prediction");
  if (present(b.web_search_options)) throw invalid("web search is not supported", "web_search_options");
}

function parseLogitBias(value: unknown): Record<string, number> {
  if (typeof value !== "object" || Array.isArray(value)) throw invalid("logit_bias must be an object mapping token ids to numbers", "logit_bias");
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_LOGIT_BIAS_ENTRIES) throw invalid(`logit_bias may hold at most ${MAX_LOGIT_BIAS_ENTRIES} tokens`, "logit_bias");
  for (const [token, bias] of entries) {
    if (!/^\d+$/.test(token)) throw invalid(`logit_bias: "${token}" is not a token id`, "logit_bias");
    if (typeof bias !== "number" || !Number.isFinite(bias) || bias < -100 || bias > 100)
      throw invalid(`logit_bias: the bias of token ${token} must be a number from -100 to 100`, "logit_bias");
  }
  return Object.fromEntries(entries) as Record<string, number>;
}

function parseResponseFormat(value: unknown): OutputConstraint | undefined {
  const format = value as { type?: unknown; json_schema?: { name?: unknown; schema?: unknown } };
  if (typeof format !== "object" || Array.isArray(format)) throw invalid("response_format must be an object", "response_format");
  if (format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json" };
  if (format.type !== "json_schema") throw invalid("response_format.type must be text, json_object or json_schema", "response_format");
  const spec = format.json_schema;
  if (!spec || typeof spec !== "object") throw invalid("response_format.json_schema is required for type json_schema", "response_format");
  if (typeof spec.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(spec.name)) {
    throw invalid("response_format.json_schema.name must be 1-64 letters, digits, _ or -", "response_format");
  }
  const schema = spec.schema ?? {};
  const problem = unsupportedSchemaPart(schema);
  if (problem) throw invalid(`response_format.json_schema.${problem}`, "response_format");
  return { type: "json_schema", schema: schema as Record<string, unknown> };
}

export function parseMessages(value: unknown): ConversationMessage[] {
  if (value === undefined || value === null) throw invalid("messages is required", "messages");
  if (!Array.isArray(value) || value.length === 0) throw invalid("messages must be a non-empty array", "messages");
  return value.map((m, i) => {
    const message = m as { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };
    if (!message || typeof message !== "object") throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      throw invalid(`messages[${i}].role must be one of ${[...ROLES].join(", ")}`, `messages[${i}].role`);
    }
    // `developer` is OpenAI's newer name for the system role.
    const role = (message.role === "developer" ? "system" : message.role) as ConversationMessage["role"];
    // Only an assistant's turn may come without content (OpenAI's rule: it carries tool_calls instead).
    if (role !== "assistant" && (message.content === null || message.content === undefined)) {
      throw invalid(`messages[${i}].content must be a string or an array of text parts (only an assistant message may have none)`, `messages[${i}].content`);
    }
    const parsed: ConversationMessage = { role, content: contentText(message.content, i) };
    if (role === "tool") {
      if (typeof message.tool_call_id !== "string") throw invalid(`messages[${i}].tool_call_id is required for a tool message`, `messages[${i}].tool_call_id`);
      parsed.toolCallId = message.tool_call_id;
    }
    if (role === "assistant" && present(message.tool_calls)) parsed.toolCalls = parseToolCalls(message.tool_calls, i);
    return parsed;
  });
}

/** An assistant message's `tool_calls`, as the client got them from an earlier answer. */
function parseToolCalls(value: unknown, i: number): ToolCall[] {
  const param = `messages[${i}].tool_calls`;
  if (!Array.isArray(value)) throw invalid(`${param} must be an array`, param);
  return value.map((c, j) => {
    const call = c as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
    if (typeof call?.id !== "string" || call.type !== "function" || typeof call.function?.name !== "string" || typeof call.function.arguments !== "string") {
      throw invalid(`${param}[${j}] must be {"id", "type": "function", "function": {"name", "arguments"}}`, param);
    }
    return { id: call.id, name: call.function.name, arguments: call.function.arguments };
  });
}

/** Content is a string or an array of text parts (images and audio are not supported). */
function contentText(content: unknown, i: number): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        const p = part as { type?: unknown; text?: unknown };
        if (p?.type !== "text" || typeof p.text !== "string") throw invalid(`messages[${i}].content[${j}] must be a text part`, `messages[${i}].content`);
        return p.text;
      })
      .join("");
  }
  if (content === null || content === undefined) return "";
  throw invalid(`messages[${i}].content must be a string or an array of text parts`, `messages[${i}].content`);
}

function parseStop(value: unknown): string[] {
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== "string")) {
    throw invalid("stop must be a string or an array of up to 4 strings", "stop");
  }
  return list as string[];
}

function number(value: unknown, param: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max)
    throw invalid(`${param} must be a number from ${min} to ${max}`, param);
  return value;
}

function integer(value: unknown, param: string, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw invalid(`${param} must be an integer from ${min} to ${max}`, param);
  return value as number;
}

const invalid = (message: string, param: string | undefined) => new InferenceError(400, "invalid_request", message, { param });
