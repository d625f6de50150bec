/**
 * The shapes every inference backend (llama.cpp worker, OpenAI-compatible upstream) shares, and
 * the one error type that carries an HTTP status to whichever listener answers the request.
 */
import type { ChatMessage } from "../../engine/infer/chat-template.js";
import type { OutputConstraint, SamplingParams, TokenLogprob } from "../../engine/infer/generation-controls.js";

export type { ChatMessage, OutputConstraint, TokenLogprob };

/** A chat to continue and how to sample it, as the llama.cpp worker receives them. */
export interface ChatParams extends SamplingParams {
  messages: ChatMessage[];
}

/** One function call the model made (OpenAI's `tool_calls[i]`); `arguments` is JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of a conversation that may involve tools (OpenAI's `tool` role and `tool_calls`). */
export interface ConversationMessage {
  role: ChatMessage["role"] | "tool";
  content: string;
  /** An assistant message that called tools. */
  toolCalls?: ToolCall[];
  /** A `tool` message: the call it answers. */
  toolCallId?: string;
}

/** A function the model may call: OpenAI's `tools[i].function`. */
export interface FunctionTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** `tools` and `tool_choice` of a request. */
export interface ToolRequest {
  functions: FunctionTool[];
  choice: "auto" | "none" | "required" | { name: string };
  /** The request's own `tools` / `tool_choice` / `parallel_tool_calls`, forwarded to upstreams unchanged. */
  raw: { tools: unknown; tool_choice?: unknown; parallel_tool_calls?: unknown };
}

/**
 * A chat as the HTTP layers hand it to the inference service: the conversation may hold tool
 * messages and the request may offer tools. Upstreams receive them as they came; the llama.cpp
 * path turns them into plain ChatParams (cloud/inference/tools.ts).
 */
export interface ChatCall extends Omit<ChatParams, "messages"> {
  messages: ConversationMessage[];
  tools?: ToolRequest;
}

export type FinishReason = "stop" | "length" | "tool_calls";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** What a running chat yields: text as soon as it is final, then exactly one `done`. */
export type ChatEvent =
  | { type: "text"; text: string; logprobs?: TokenLogprob[] }
  /** A complete function call (its arguments are final). */
  | { type: "tool_call"; call: ToolCall }
  | { type: "done"; finishReason: FinishReason; usage: Usage };

export type ChatStream = AsyncIterable<ChatEvent>;

/** Where a target's tokens come from, once the deployment target has been resolved. */
export type Backend =
  | { kind: "local"; modelPath: string; adapterPath: string | null }
  | { kind: "upstream"; baseUrl: string; model: string; lora?: UpstreamLora };

/**
 * An adapter a vLLM upstream loads at run time (`model` is then its name): its PEFT files in the
 * cloud's data dir, and the shared folder they are copied into, as the cloud and as vLLM see it.
 */
export interface UpstreamLora {
  name: string;
  weightsFile: string;
  configFile: string;
  dir: string;
  dirOnServer: string;
}

/** A failure with the status the client should see (429 queue full, 502/504 upstream, 503 worker died). */
export class InferenceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: {
      /** Seconds, for 429 and 503 answers. */
      retryAfter?: number;
      /** The request field at fault, for 400 answers (OpenAI's `param`). */
      param?: string;
      /** The HTTP status an upstream answered, when it refused the request (404: it has no such model). */
      upstreamStatus?: number;
    } = {},
  ) {
    super(message);
  }
}
