/**
 * Proxy to an OpenAI-compatible upstream (vLLM, llama.cpp's server, ...): one request per chat,
 * streamed through chunk by chunk as it arrives. Failures become a 502 (unreachable, bad answer)
 * or 504 (no answer in time) whose message names the upstream, never a hang.
 */
import { InferenceError, type ChatCall, type ChatEvent, type FinishReason, type TokenLogprob, type Usage } from "./types.js";
import { ToolCallDeltas, upstreamFinishReason, upstreamMessages, upstreamToolCalls } from "./upstreamTools.js";

export interface UpstreamTimeouts {
  /** Until the upstream's response headers arrive. */
  headersMs: number;
  /** Longest silence between two chunks of a streamed answer (or for the whole JSON body). */
  idleMs: number;
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { headersMs: 30_000, idleMs: 60_000 };

export async function* upstreamChat(
  baseUrl: string,
  model: string,
  params: ChatCall,
  options: { stream: boolean; signal?: AbortSignal; timeouts?: UpstreamTimeouts },
): AsyncGenerator<ChatEvent> {
  const timeouts = options.timeouts ?? DEFAULT_UPSTREAM_TIMEOUTS;
  const abort = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, ms);
  };
  const onClientAbort = () => abort.abort();
  options.signal?.addEventListener("abort", onClientAbort, { once: true });
  const failure = (err: unknown): InferenceError => {
    if (err instanceof InferenceError) return err;
    if (timedOut) return new InferenceError(504, "upstream_timeout", `upstream ${baseUrl} did not answer in time`);
    if (options.signal?.aborted) return new InferenceError(499, "client_closed", "the client went away");
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return new InferenceError(502, "upstream_unreachable", `upstream ${baseUrl} failed: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  };

  try {
    arm(timeouts.headersMs);
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: options.stream ? "text/event-stream" : "application/json" },
      body: JSON.stringify(requestBody(model, params, options.stream)),
      signal: abort.signal,
    });
    arm(timeouts.idleMs);
    if (!response.ok) throw await upstreamStatusError(baseUrl, response);
    if (!options.stream) {
      yield* completionEvents(baseUrl, await response.json().catch(() => null));
      return;
    }
    let finishReason: FinishReason = "stop";
    let usage: Usage | null = null;
    let completionChunks = 0;
    const toolCalls = new ToolCallDeltas();
    for await (const data of sseData(response.body!, () => arm(timeouts.idleMs))) {
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
    options.signal?.removeEventListener("abort", onClientAbort);
    // Stops the upstream generating for a client that left (or after we stopped reading).
    abort.abort();
  }
}

function requestBody(model: string, p: ChatCall, stream: boolean): Record<string, unknown> {
  return {
    model,
    messages: upstreamMessages(p.messages),
    // Tools go to the upstream as the client sent them; its tool_calls come back mapped.
    ...(p.tools ? p.tools.raw : {}),
    ...(p.maxTokens !== undefined ? { max_tokens: p.maxTokens } : {}),
    ...(p.temperature !== undefined ? { temperature: p.temperature } : {}),
    ...(p.topP !== undefined ? { top_p: p.topP } : {}),
    ...(p.stop?.length ? { stop: p.stop } : {}),
    ...(p.seed !== undefined ? { seed: p.seed } : {}),
    ...(p.presencePenalty !== undefined ? { presence_penalty: p.presencePenalty } : {}),
    ...(p.frequencyPenalty !== undefined ? { frequency_penalty: p.frequencyPenalty } : {}),
    ...(p.logitBias ? { logit_bias: p.logitBias } : {}),
    ...(p.topLogprobs !== undefined ? { logprobs: true, top_logprobs: p.topLogprobs } : {}),
    ...(p.output ? { response_format: p.output.type === "json" ? { type: "json_object" } : { type: "json_schema", json_schema: { name: "response", schema: p.output.schema, strict: true } } } : {}),
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  };
}

async function upstreamStatusError(baseUrl: string, response: Response): Promise<InferenceError> {
  const body = parseJson(await response.text().catch(() => ""));
  const detail = body?.error?.message ?? body?.message ?? response.statusText;
  // A request the upstream finds invalid is the caller's problem; anything else is the upstream's.
  const status = [400, 413, 422].includes(response.status) ? 400 : 502;
  return new InferenceError(status, status === 400 ? "invalid_request" : "upstream_error", `upstream ${baseUrl} answered HTTP ${response.status}: ${detail}`);
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
async function* sseData(body: ReadableStream<Uint8Array>, onChunk: () => void): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk();
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      if (line === "") {
        if (data.length) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(5).replace(/^ /, ""));
      }
    }
  }
  if (data.length) yield data.join("\n");
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
