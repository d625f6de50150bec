/**
 * Writes running chats as OpenAI's wire format: one `chat.completion` JSON, or SSE `data:`
 * frames of `chat.completion.chunk` ending with `data: [DONE]`. Shared by the edge and the
 * control plane's /v1/inference/chat so both answer identically.
 *
 * `n` answers are generated one after another (each its own generation, with seed + index when a
 * seed was given); a stream sends each choice's chunks in turn, tagged with its index.
 *
 * The first event is awaited before anything is written, so a failure that happens before the
 * first token (upstream down, worker crashed, a bad parameter the engine found) still gets a
 * proper status code; a failure after that can only be reported inside the stream.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { InferenceError, type ChatEvent, type ChatStream, type FinishReason, type TokenLogprob, type ToolCall, type Usage } from "./types.js";
import { beginEventStream } from "../http/sse.js";

export interface ChatResponseOptions {
  /** The `model` field of the answer (the deployment's model id). */
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** `logprobs: true` was asked: each choice (or chunk) carries `logprobs.content`. */
  logprobs: boolean;
  /** How many choices (`n`). */
  choices: number;
}

/** Starts the generation of choice `index` (0-based). */
export type StartChoice = (index: number) => Promise<ChatStream>;

/** Unique per process run (random prefix, then a counter): ids need no secrecy, and randomBytes per answer showed in profiles. */
const ID_PREFIX = `chatcmpl-${randomBytes(9).toString("base64url")}`;
let idCounter = 0;

export function completionId(): string {
  idCounter += 1;
  return ID_PREFIX + idCounter.toString(36).padStart(6, "0");
}

export async function sendChat(reply: FastifyReply, start: StartChoice, options: ChatResponseOptions): Promise<void> {
  const events = (await start(0))[Symbol.asyncIterator]();
  const first = await events.next();
  if (options.stream) return streamChat(reply, first, events, start, options);
  const choices: CollectedChoice[] = [await collect(first, events)];
  for (let index = 1; index < options.choices; index++) {
    const next = (await start(index))[Symbol.asyncIterator]();
    choices.push(await collect(await next.next(), next));
  }
  const usage = totalUsage(choices.map((c) => c.usage));
  await reply.header("cache-control", "no-store").send(completionBody(options.model, choices, usage, options.logprobs));
}

export interface CollectedChoice {
  text: string;
  toolCalls: ToolCall[];
  logprobs: TokenLogprob[];
  finishReason: FinishReason;
  usage: Usage;
}

export async function collect(first: IteratorResult<ChatEvent>, events: AsyncIterator<ChatEvent>): Promise<CollectedChoice> {
  let text = "";
  const toolCalls: ToolCall[] = [];
  const logprobs: TokenLogprob[] = [];
  let done: Extract<ChatEvent, { type: "done" }> | null = null;
  // Read to the very end: the stream's own end is what frees its inference queue slot.
  for (let step = first; !step.done; step = await events.next()) {
    const event = step.value;
    if (event.type === "done") done = event;
    else if (event.type === "tool_call") toolCalls.push(event.call);
    else {
      text += event.text;
      if (event.logprobs) logprobs.push(...event.logprobs);
    }
  }
  if (!done) throw new InferenceError(502, "incomplete_answer", "the model stopped without finishing its answer");
  return { text, toolCalls, logprobs, finishReason: done.finishReason, usage: done.usage };
}

/** The prompt is read once for all choices; completions add up. */
export function totalUsage(usages: Usage[]): Usage {
  const promptTokens = usages[0].promptTokens;
  const completionTokens = usages.reduce((sum, u) => sum + u.completionTokens, 0);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

export function completionBody(model: string, choices: CollectedChoice[], usage: Usage, logprobs: boolean) {
  return {
    id: completionId(),
    object: "chat.completion" as const,
    created: Math.floor(Date.now() / 1000),
    model,
    choices: choices.map((choice, index) => ({
      index,
      message: {
        role: "assistant" as const,
        // OpenAI sends null content beside tool calls when the model wrote no text.
        content: choice.toolCalls.length && !choice.text ? null : choice.text,
        refusal: null,
        ...(choice.toolCalls.length
          ? { tool_calls: choice.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      },
      logprobs: logprobs ? wireLogprobs(choice.logprobs) : null,
      finish_reason: choice.finishReason,
    })),
    usage: wireUsage(usage),
  };
}

function wireLogprobs(entries: TokenLogprob[]) {
  return {
    content: entries.map((e) => ({
      token: e.token,
      logprob: e.logprob,
      bytes: e.bytes,
      top_logprobs: e.topLogprobs.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes })),
    })),
    refusal: null,
  };
}

function wireUsage(usage: Usage) {
  return { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
}

async function streamChat(
  reply: FastifyReply,
  first: IteratorResult<ChatEvent>,
  firstEvents: AsyncIterator<ChatEvent>,
  start: StartChoice,
  options: ChatResponseOptions,
): Promise<void> {
  // The first event is here already: the headers leave with the first chunks, in one write.
  const res = beginEventStream(reply, { firstEventReady: true });
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  // Tokens that arrive in one turn of the event loop leave in one socket write: one chunk per
  // token otherwise costs a syscall each, which on a busy machine is a tenth of svc-tiny's decode.
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  const send = (frame: string) => {
    if (res.destroyed) return;
    if (!corked) {
      corked = true;
      res.cork();
      setImmediate(uncork);
    }
    res.write(frame);
  };
  const write = (payload: unknown) => send(`data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`);
  // The hot path, a text delta without logprobs, built around the text's JSON: the same bytes as
  // JSON.stringify(chunk(index, { content }, null)), without serialising the fixed fields per token.
  const textFrameEnd = `},"logprobs":null,"finish_reason":null}]${options.includeUsage ? ',"usage":null' : ""}}\n\n`;
  const textFrameStart = (index: number) =>
    `data: {"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(options.model)},"choices":[{"index":${index},"delta":{"content":`;
  const chunk = (index: number, delta: Record<string, unknown>, finishReason: FinishReason | null, logprobs: TokenLogprob[] | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: options.model,
    choices: [{ index, delta, logprobs: options.logprobs && logprobs ? wireLogprobs(logprobs) : null, finish_reason: finishReason }],
    ...(options.includeUsage ? { usage: null } : {}),
  });
  // The client leaving ends the iteration, which cancels the generation upstream or in the worker.
  let clientGone = false;
  res.on("close", () => (clientGone = !res.writableFinished));
  let events = firstEvents;
  const usages: Usage[] = [];
  try {
    for (let index = 0; index < options.choices && !clientGone; index++) {
      let step = first;
      if (index > 0) {
        events = (await start(index))[Symbol.asyncIterator]();
        step = await events.next();
      }
      write(chunk(index, { role: "assistant", content: "" }, null));
      const textStart = textFrameStart(index);
      let toolIndex = 0;
      for (; !step.done && !clientGone; step = await events.next()) {
        const event = step.value;
        if (event.type === "text") {
          if (options.logprobs) write(chunk(index, { content: event.text }, null, event.logprobs ?? []));
          else send(textStart + JSON.stringify(event.text) + textFrameEnd);
          continue;
        }
        if (event.type === "tool_call") {
          // As OpenAI streams a call: a first delta naming it with empty arguments, then the arguments.
          const call = event.call;
          const at = toolIndex++;
          write(chunk(index, { tool_calls: [{ index: at, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }, null));
          if (call.arguments) write(chunk(index, { tool_calls: [{ index: at, function: { arguments: call.arguments } }] }, null));
          continue;
        }
        write(chunk(index, {}, event.finishReason));
        usages.push(event.usage);
      }
    }
    if (options.includeUsage && usages.length === options.choices) {
      write({ id, object: "chat.completion.chunk", created, model: options.model, choices: [], usage: wireUsage(totalUsage(usages)) });
    }
    write("[DONE]");
  } catch (err) {
    const e = err instanceof InferenceError ? err : new InferenceError(500, "internal_error", "internal error");
    write({ error: { message: e.message, type: e.status >= 500 ? "server_error" : "invalid_request_error", param: e.extra.param ?? null, code: e.code } });
  } finally {
    if (clientGone) await events.return?.();
    res.end();
  }
}
