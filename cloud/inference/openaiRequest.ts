/**
 * Reads an OpenAI chat-completions request body into engine parameters, with 400s that name the
 * offending field (OpenAI's `param`). `model` is ignored: the deployment fixes what answers.
 */
import { InferenceError, type ChatMessage, type ChatParams } from "./types.js";

export interface ChatRequest {
  params: ChatParams;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with `usage` and no choices. */
  includeUsage: boolean;
}

const ROLES = new Set(["system", "developer", "user", "assistant"]);
/** Longest generation one request may ask for; the context window usually caps it first. */
export const MAX_TOKENS_LIMIT = 4096;

export function parseChatRequest(body: unknown): ChatRequest {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalid("the request body must be a JSON object", undefined);
  const b = body as Record<string, unknown>;
  const params: ChatParams = { messages: parseMessages(b.messages) };
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) {
    params.maxTokens = integer(maxTokens, b.max_completion_tokens !== undefined ? "max_completion_tokens" : "max_tokens", 1, MAX_TOKENS_LIMIT);
  }
  if (b.temperature !== undefined && b.temperature !== null) params.temperature = number(b.temperature, "temperature", 0, 2);
  if (b.top_p !== undefined && b.top_p !== null) params.topP = number(b.top_p, "top_p", 0, 1);
  if (b.seed !== undefined && b.seed !== null) params.seed = integer(b.seed, "seed", 0, 2 ** 32 - 1);
  if (b.stop !== undefined && b.stop !== null) params.stop = parseStop(b.stop);
  if (b.n !== undefined && b.n !== null && b.n !== 1) throw invalid("only n=1 is supported", "n");
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== "boolean") throw invalid("stream must be a boolean", "stream");
  const streamOptions = b.stream_options as { include_usage?: unknown } | undefined | null;
  return { params, stream: b.stream === true, includeUsage: streamOptions?.include_usage === true };
}

function parseMessages(value: unknown): ChatMessage[] {
  if (value === undefined || value === null) throw invalid("messages is required", "messages");
  if (!Array.isArray(value) || value.length === 0) throw invalid("messages must be a non-empty array", "messages");
  return value.map((m, i) => {
    const message = m as { role?: unknown; content?: unknown };
    if (!message || typeof message !== "object") throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof message.role !== "string" || !ROLES.has(message.role)) {
      throw invalid(`messages[${i}].role must be one of system, user, assistant`, `messages[${i}].role`);
    }
    // `developer` is OpenAI's newer name for the system role.
    const role = (message.role === "developer" ? "system" : message.role) as ChatMessage["role"];
    return { role, content: contentText(message.content, i) };
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
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) throw invalid(`${param} must be a number from ${min} to ${max}`, param);
  return value;
}

function integer(value: unknown, param: string, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw invalid(`${param} must be an integer from ${min} to ${max}`, param);
  return value as number;
}

const invalid = (message: string, param: string | undefined) => new InferenceError(400, "invalid_request", message, { param });
