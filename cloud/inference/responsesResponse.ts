/**
 * Answers a Responses API request: one `response` object, or the SSE events OpenAI sends
 * (`response.created`, `response.in_progress`, `response.output_item.added`,
 * `response.content_part.added`, `response.output_text.delta`, ... `response.completed`).
 * Text becomes a `message` output item; each tool call a `function_call` item.
 *
 * As for chat, the first event is awaited before anything is written, so a failure before the
 * first token still gets its HTTP status.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { beginEventStream } from "../http/sse.js";
import type { Backend, InferenceService } from "./index.js";
import { clientGoneOf } from "./clientGone.js";
import { collect } from "./openaiResponse.js";
import type { ResponsesRequest } from "./responsesRequest.js";
import { InferenceError, type ChatEvent, type FinishReason, type ToolCall, type Usage } from "./types.js";

const newId = (prefix: string) => `${prefix}_${randomBytes(16).toString("hex")}`;

export async function answerResponses(
  reply: FastifyReply,
  inference: InferenceService,
  backend: Backend,
  request: ResponsesRequest,
  options: { model: string; queueKey: string },
): Promise<void> {
  const clientGone = clientGoneOf(reply.raw);
  const { chat } = request;
  const events = (await inference.chat(backend, chat.params, { stream: chat.stream, queueKey: options.queueKey, signal: clientGone }))[Symbol.asyncIterator]();
  const first = await events.next();
  const shell = responseShell(request, options.model);
  if (!chat.stream) {
    const answer = await collect(first, events);
    const output = [
      ...(answer.text || answer.toolCalls.length === 0 ? [messageItem(newId("msg"), answer.text, "completed")] : []),
      ...answer.toolCalls.map((call) => functionCallItem(newId("fc"), call, "completed")),
    ];
    await reply.header("cache-control", "no-store").send(finished(shell, output, answer.finishReason, answer.usage));
    return;
  }
  await streamResponse(reply, shell, first, events);
}

type Shell = ReturnType<typeof responseShell>;

function responseShell(request: ResponsesRequest, model: string) {
  const e = request.echo;
  return {
    id: newId("resp"),
    object: "response" as const,
    created_at: Math.floor(Date.now() / 1000),
    status: "in_progress" as string,
    error: null,
    incomplete_details: null as null | { reason: string },
    instructions: e.instructions,
    max_output_tokens: e.maxOutputTokens,
    model,
    output: [] as unknown[],
    parallel_tool_calls: e.parallelToolCalls,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: e.temperature,
    text: e.text,
    tool_choice: e.toolChoice,
    tools: e.tools,
    top_p: e.topP,
    truncation: "disabled",
    usage: null as null | ReturnType<typeof wireUsage>,
    user: null,
    metadata: e.metadata,
  };
}

function finished(shell: Shell, output: unknown[], finishReason: FinishReason, usage: Usage): Shell {
  const cut = finishReason === "length";
  return {
    ...shell,
    status: cut ? "incomplete" : "completed",
    incomplete_details: cut ? { reason: "max_output_tokens" } : null,
    output,
    usage: wireUsage(usage),
  };
}

function messageItem(id: string, text: string, status: string) {
  return { type: "message", id, status, role: "assistant", content: [outputText(text)] };
}

const outputText = (text: string) => ({ type: "output_text", text, annotations: [] as unknown[], logprobs: [] as unknown[] });

function functionCallItem(id: string, call: ToolCall, status: string) {
  return { type: "function_call", id, call_id: call.id, name: call.name, arguments: call.arguments, status };
}

function wireUsage(usage: Usage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.totalTokens,
  };
}

async function streamResponse(reply: FastifyReply, shell: Shell, first: IteratorResult<ChatEvent>, events: AsyncIterator<ChatEvent>): Promise<void> {
  // The first event is here already: the headers leave with the first events, in one write.
  const res = beginEventStream(reply, { firstEventReady: true });
  let sequence = 0;
  const send = (type: string, payload: Record<string, unknown>) => {
    if (!res.destroyed) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`);
  };
  let clientGone = false;
  res.on("close", () => (clientGone = !res.writableFinished));
  const output: unknown[] = [];
  // The open message item, between its first text and the end (or a tool call).
  let message: { id: string; index: number; text: string } | null = null;
  const closeMessage = () => {
    if (!message) return;
    const { id, index, text } = message;
    send("response.output_text.done", { item_id: id, output_index: index, content_index: 0, text, logprobs: [] });
    send("response.content_part.done", { item_id: id, output_index: index, content_index: 0, part: outputText(text) });
    const item = messageItem(id, text, "completed");
    send("response.output_item.done", { output_index: index, item });
    output[index] = item;
    message = null;
  };
  try {
    send("response.created", { response: shell });
    send("response.in_progress", { response: shell });
    for (let step = first; !step.done && !clientGone; step = await events.next()) {
      const event = step.value;
      if (event.type === "text") {
        if (!message) {
          message = { id: newId("msg"), index: output.length, text: "" };
          output.push(null);
          send("response.output_item.added", {
            output_index: message.index,
            item: { type: "message", id: message.id, status: "in_progress", role: "assistant", content: [] },
          });
          send("response.content_part.added", { item_id: message.id, output_index: message.index, content_index: 0, part: outputText("") });
        }
        message.text += event.text;
        send("response.output_text.delta", { item_id: message.id, output_index: message.index, content_index: 0, delta: event.text, logprobs: [] });
      } else if (event.type === "tool_call") {
        closeMessage();
        const id = newId("fc");
        const index = output.length;
        send("response.output_item.added", { output_index: index, item: functionCallItem(id, { ...event.call, arguments: "" }, "in_progress") });
        send("response.function_call_arguments.delta", { item_id: id, output_index: index, delta: event.call.arguments });
        send("response.function_call_arguments.done", { item_id: id, output_index: index, arguments: event.call.arguments });
        const item = functionCallItem(id, event.call, "completed");
        send("response.output_item.done", { output_index: index, item });
        output.push(item);
      } else {
        closeMessage();
        const done = finished(shell, output, event.finishReason, event.usage);
        send(done.status === "completed" ? "response.completed" : "response.incomplete", { response: done });
      }
    }
  } catch (err) {
    const e = err instanceof InferenceError ? err : new InferenceError(500, "internal_error", "internal error");
    send("error", { code: e.code, message: e.message, param: e.extra.param ?? null });
  } finally {
    if (clientGone) await events.return?.();
    res.end();
  }
}
