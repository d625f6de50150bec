/**
 * The shapes every inference backend (llama.cpp worker, OpenAI-compatible upstream) shares, and
 * the one error type that carries an HTTP status to whichever listener answers the request.
 */
import type { ChatMessage } from "../../engine/infer/chat-template.js";
import type { OutputConstraint, TokenLogprob } from "../../engine/infer/generation-controls.js";

export type { ChatMessage, OutputConstraint, TokenLogprob };

/** Sampling parameters in the engine's spelling; the HTTP layers translate from OpenAI's. */
export interface ChatParams {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** Absent: a random seed per request. */
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Token id → logit shift, -100 to 100. */
  logitBias?: Record<string, number>;
  /** `response_format` json_object / json_schema, enforced by a grammar. */
  output?: OutputConstraint;
  /** Set when `logprobs: true`: how many alternatives per token (`top_logprobs`, 0-20). */
  topLogprobs?: number;
}

export type FinishReason = "stop" | "length";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** What a running chat yields: text as soon as it is final, then exactly one `done`. */
export type ChatEvent = { type: "text"; text: string; logprobs?: TokenLogprob[] } | { type: "done"; finishReason: FinishReason; usage: Usage };

export type ChatStream = AsyncIterable<ChatEvent>;

/** Where a target's tokens come from, once the deployment target has been resolved. */
export type Backend =
  | { kind: "local"; modelPath: string; adapterPath: string | null }
  | { kind: "upstream"; baseUrl: string; model: string };

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
    } = {},
  ) {
    super(message);
  }
}
