/**
 * Proxy to an OpenAI-compatible upstream (vLLM, llama.cpp's server, ...): one request per chat on
 * a pooled keep-alive connection (upstreamPool.ts), streamed through chunk by chunk as it arrives.
 * Failures become a 502 (unreachable, bad answer) or 504 (no answer in time) whose message names
 * the upstream, never a hang.
 */
import type { ClientRequest, IncomingMessage } from "node:http";
import { InferenceError, type ChatCall, type ChatEvent, type FinishReason, type TokenLogprob, type Usage } from "./types.js";
import type { CancelSignal } from "./clientGone.js";
import type { UpstreamPool } from "./upstreamPool.js";
import { ToolCallDeltas, upstreamFinishReason, upstreamMessages, upstreamToolCalls } from "./upstreamTools.js";
import { SseParser } from "../../sdk/sseParser.js";

export interface UpstreamTimeouts {
  /** Until the upstream's response headers arrive. */
  headersMs: number;
  /** Longest silence between two chunks of a streamed answer (or for the whole JSON body). */
  idleMs: number;
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { headersMs: 30_000, idleMs: 60_000 };

export async function* upstreamChat(
  pool: UpstreamPool,
  baseUrl: string,
  model: string,
  params: ChatCall,
  options: { stream: boolean; signal?: CancelSignal; timeouts?: UpstreamTimeouts },
): AsyncGenerator<ChatEvent> {
  const timeouts = options.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS;
  const signal = options.signal;
  if (signal?.aborted) throw new InferenceError(499, "client_closed", "the client went away");
  let request: ClientRequest | undefined;
  let response: IncomingMessage | undefined;
  let timedOut = false;
  // Our own reasons for ending a request carry no errno code, so the pool never retries them.
  const onTimeout = () => {
    timedOut = true;
    request?.destroy(new Error("timed out"));
  };
  const onClientAbort = () => request?.destroy(new Error("client went away"));
  let timer: NodeJS.Timeout = setTimeout(onTimeout, timeouts.headersMs);
  signal?.addEventListener("abort", onClientAbort, { once: true });
  const failure = (err: unknown): InferenceError => {
    if (err instanceof InferenceError) return err;
    if (timedOut) return new InferenceError(504, "upstream_timeout", `upstream ${baseUrl} did not answer in time`);
    if (signal?.aborted) return new InferenceError(499, "client_closed", "the client went away");
    const e = err as NodeJS.ErrnoException;
    return new InferenceError(502, "upstream_unreachable", `upstream ${baseUrl} failed: ${e.code ?? e.message}`);
  };

  try {
    const body = JSON.stringify(requestBody(model, params, options.stream));
    const headers = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      accept: options.stream ? "text/event-stream" : "application/json",
    };
    response = await pool.post(pool.target(baseUrl), body, headers, (sent) => (request = sent));
    clearTimeout(timer);
    // Re-armed by every chunk (refresh() moves the same timer, no new one per chunk).
    timer = setTimeout(onTimeout, timeouts.idleMs);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) throw upstreamStatusError(baseUrl, status, response.statusMessage ?? "", (await readAll(response, timer)).toString());
    if (!options.stream) {
      yield* completionEvents(baseUrl, parseJson((await readAll(response, timer)).toString()));
      return;
    }
    let finishReason: FinishReason = "stop";
    let usage: Usage | null = null;
    let completionChunks = 0;
    const toolCalls = new ToolCallDeltas();
    for await (const data of sseData(response, timer)) {
      if (data === "[DONE]") break;
      const chunk = parseJson(data);
      if (!chunk) throw new InferenceError(502, "upstream_bad_response", `upstream ${baseUrl} sent a chunk that is not JSON`);
      if (chunk.error) throw new InferenceError(502, "upstream_error", `upstream ${baseUrl} failed: ${chunk.error.message ?? "unknown error"}`);
      const choice = chunk.choices?.[0];
      const text = choice?.delta?.content;
      if (typeof text === "string" && text) {
        completionChunks += 1;
        yield { type: "text", text, ...logprobsOf(choice) };
      }
      toolCalls.add(choice?.delta?.tool_calls);
      if (choice?.finish_reason) finishReason = upstreamFinishReason(choice.finish_reason);
      if (chunk.usage) usage = toUsage(chunk.usage);
    }
    yield* toolCalls.events();
    // An upstream that reports no usage gets an estimate: one token per streamed chunk.
    yield { type: "done", finishReason, usage: usage ?? { promptTokens: 0, completionTokens: completionChunks, totalTokens: completionChunks } };
  } catch (err) {
    throw failure(err);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onClientAbort);
    // A response read to its end leaves its socket to the pool; anything else (a client that
    // left, a stream we stopped reading, a failure) closes it, which also stops the upstream generating.
    if (!response?.complete) request?.destroy(new Error("stopped reading"));
  }
}

/** The whole body of a response, re-arming the idle timer on each chunk. */
function readAll(response: IncomingMessage, idle: NodeJS.Timeout): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on("data", (chunk: Buffer) => {
      idle.refresh();
      chunks.push(chunk);
    });
    response.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    response.on("error", reject);
    response.on("close", () => response.complete || reject(new Error("the connection closed mid-answer")));
  });
}

/**
 * The upstream's request, field by field (one object, in a fixed order; a chain of conditional
 * spreads allocated an object per field on every proxied request).
 */
function requestBody(model: string, p: ChatCall, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model, messages: upstreamMessages(p.messages) };
  // Tools go to the upstream as the client sent them; its tool_calls come back mapped.
  if (p.tools) Object.assign(body, p.tools.raw);
  if (p.maxTokens !== undefined) body.max_tokens = p.maxTokens;
  if (p.temperature !== undefined) body.temperature = p.temperature;
  if (p.topP !== undefined) body.top_p = p.topP;
  if (p.stop?.length) body.stop = p.stop;
  if (p.seed !== undefined) body.seed = p.seed;
  if (p.presencePenalty !== undefined) body.presence_penalty = p.presencePenalty;
  if (p.frequencyPenalty !== undefined) body.frequency_penalty = p.frequencyPenalty;
  if (p.logitBias) body.logit_bias = p.logitBias;
  if (p.topLogprobs !== undefined) {
    body.logprobs = true;
    body.top_logprobs = p.topLogprobs;
  }
  if (p.output)
    body.response_format =
      p.output.type === "json" ? { type: "json_object" } : { type: "json_schema", json_schema: { name: "response", schema: p.output.schema, strict: true } };
  body.stream = stream;
  if (stream) body.stream_options = { include_usage: true };
  return body;
}

function upstreamStatusError(baseUrl: string, upstreamStatus: number, statusText: string, text: string): InferenceError {
  const body = parseJson(text);
  const detail = body?.error?.message ?? body?.message ?? statusText;
  // A request the upstream finds invalid is the caller's problem; anything else is the upstream's.
  const status = [400, 413, 422].includes(upstreamStatus) ? 400 : 502;
  return new InferenceError(status, status === 400 ? "invalid_request" : "upstream_error", `upstream ${baseUrl} answered HTTP ${upstreamStatus}: ${detail}`, {
    upstreamStatus,
  });
}

function* completionEvents(baseUrl: string, body: any): Generator<ChatEvent> {
  const choice = body?.choices?.[0];
  const calls = upstreamToolCalls(choice?.message?.tool_calls);
  if (!choice || (typeof choice.message?.content !== "string" && calls.length === 0)) {
    throw new InferenceError(502, "upstream_bad_response", `upstream ${baseUrl} answered without choices[0].message.content`);
  }
  if (choice.message.content) yield { type: "text", text: choice.message.content, ...logprobsOf(choice) };
  for (const call of calls) yield { type: "tool_call", call };
  const usage = body.usage ? toUsage(body.usage) : { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  yield { type: "done", finishReason: upstreamFinishReason(choice.finish_reason), usage };
}

/** An upstream choice's `logprobs.content`, in the engine's spelling. */
function logprobsOf(choice: any): { logprobs?: TokenLogprob[] } {
  const content = choice?.logprobs?.content;
  if (!Array.isArray(content)) return {};
  const entry = (e: any) => ({ token: String(e?.token ?? ""), logprob: Number(e?.logprob ?? 0), bytes: Array.isArray(e?.bytes) ? e.bytes : [] });
  return { logprobs: content.map((e: any) => ({ ...entry(e), topLogprobs: Array.isArray(e?.top_logprobs) ? e.top_logprobs.map(entry) : [] })) };
}

function toUsage(u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number }): Usage {
  const promptTokens = Number(u.prompt_tokens ?? 0);
  const completionTokens = Number(u.completion_tokens ?? 0);
  return { promptTokens, completionTokens, totalTokens: Number(u.total_tokens ?? promptTokens + completionTokens) };
}

/** The `data:` payloads of a Server-Sent Events body, one per event. */
async function* sseData(body: IncomingMessage, idle: NodeJS.Timeout): AsyncGenerator<string> {
  // The decoder of setEncoding keeps a character split across two chunks whole.
  body.setEncoding("utf8");
  const parser = new SseParser();
  for await (const text of body as AsyncIterable<string>) {
    idle.refresh();
    for (const message of parser.feed(text)) yield message.data;
  }
  // A body cut without its final blank line still ends the event it carried.
  for (const message of parser.feed("\n\n")) yield message.data;
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
