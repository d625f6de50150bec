/**
 * Tool calls through an OpenAI-compatible upstream: the conversation goes out in OpenAI's shape
 * (tool messages, assistant tool_calls) and the upstream's tool_calls, whole or as stream
 * deltas, come back as `tool_call` events. Kept apart from upstream.ts, which only calls in.
 */
import type { ChatEvent, ConversationMessage, FinishReason, ToolCall } from "./types.js";

export function upstreamMessages(messages: ConversationMessage[]): Record<string, unknown>[] {
  return messages.map((m) => {
    const message: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.toolCallId !== undefined) message.tool_call_id = m.toolCallId;
    if (m.toolCalls?.length) message.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    return message;
  });
}

export function upstreamFinishReason(reason: unknown): FinishReason {
  return reason === "length" ? "length" : reason === "tool_calls" || reason === "function_call" ? "tool_calls" : "stop";
}

/** A non-streamed answer's `message.tool_calls`. */
export function upstreamToolCalls(value: unknown): ToolCall[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((c) => typeof c?.function?.name === "string")
    .map((c) => ({
      id: String(c.id ?? ""),
      name: c.function.name,
      arguments: typeof c.function.arguments === "string" ? c.function.arguments : JSON.stringify(c.function.arguments ?? {}),
    }));
}

/** Streamed `delta.tool_calls`, joined by index (the first delta names the call, later ones append arguments). */
export class ToolCallDeltas {
  private readonly calls = new Map<number, ToolCall>();

  add(deltas: unknown): void {
    if (!Array.isArray(deltas)) return;
    for (const d of deltas) {
      const index = Number(d?.index ?? 0);
      const call = this.calls.get(index) ?? { id: "", name: "", arguments: "" };
      if (typeof d?.id === "string") call.id = d.id;
      if (typeof d?.function?.name === "string") call.name += d.function.name;
      if (typeof d?.function?.arguments === "string") call.arguments += d.function.arguments;
      this.calls.set(index, call);
    }
  }

  *events(): Generator<ChatEvent> {
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) yield { type: "tool_call", call: this.calls.get(index)! };
  }
}
