/**
 * Writes a running chat as OpenAI's wire format: one `chat.completion` JSON, or SSE `data:`
 * frames of `chat.completion.chunk` ending with `data: [DONE]`. Shared by the edge and the
 * control plane's /v1/inference/chat so both stream identically.
 *
 * The first event is awaited before anything is written, so a failure that happens before the
 * first token (upstream down, worker crashed) still gets a proper status code; a failure after
 * that can only be reported inside the stream.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { InferenceError, type ChatEvent, type ChatStream, type FinishReason, type Usage } from "./types.js";
import { beginEventStream } from "../http/sse.js";

export interface ChatResponseOptions {
  /** The `model` field of the answer (the deployment's model id). */
  model: string;
  stream: boolean;
  includeUsage: boolean;
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString("base64url")}`;
}

export async function sendChat(reply: FastifyReply, stream: ChatStream, options: ChatResponseOptions): Promise<void> {
  const events = stream[Symbol.asyncIterator]();
  const first = await events.next();
  if (options.stream) return streamChat(reply, first, events, options);
  let text = "";
  let done: Extract<ChatEvent, { type: "done" }> | null = null;
  for (let step = first; !step.done; step = await events.next()) {
    if (step.value.type === "text") text += step.value.text;
    else done = step.value;
  }
  if (!done) throw new InferenceError(502, "incomplete_answer", "the model stopped without finishing its answer");
  await reply.header("cache-control", "no-store").send(completionBody(options.model, text, done.finishReason, done.usage));
}

export function completionBody(model: string, text: string, finishReason: FinishReason, usage: Usage) {
  return {
    id: completionId(),
    object: "chat.completion" as const,
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: "assistant" as const, content: text, refusal: null }, logprobs: null, finish_reason: finishReason }],
    usage: wireUsage(usage),
  };
}

function wireUsage(usage: Usage) {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
}

async function streamChat(
  reply: FastifyReply,
  first: IteratorResult<ChatEvent>,
  events: AsyncIterator<ChatEvent>,
  options: ChatResponseOptions,
): Promise<void> {
  const res = beginEventStream(reply);
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  const write = (payload: unknown) => {
    if (!res.destroyed) res.write(`data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`);
  };
  const chunk = (delta: Record<string, unknown>, finishReason: FinishReason | null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: options.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(options.includeUsage ? { usage: null } : {}),
  });
  // The client leaving ends the iteration, which cancels the generation upstream or in the worker.
  let clientGone = false;
  res.on("close", () => (clientGone = !res.writableFinished));
  write(chunk({ role: "assistant", content: "" }, null));
  try {
    for (let step = first; !step.done && !clientGone; step = await events.next()) {
      const event = step.value;
      if (event.type === "text") {
        write(chunk({ content: event.text }, null));
        continue;
      }
      write(chunk({}, event.finishReason));
      if (options.includeUsage) write({ id, object: "chat.completion.chunk", created, model: options.model, choices: [], usage: wireUsage(event.usage) });
    }
    write("[DONE]");
  } catch (err) {
    const e = err instanceof InferenceError ? err : new InferenceError(500, "internal_error", "internal error");
    write({ error: { message: e.message, type: e.status >= 500 ? "server_error" : "invalid_request_error", param: null, code: e.code } });
  } finally {
    if (clientGone) await events.return?.();
    res.end();
  }
}
