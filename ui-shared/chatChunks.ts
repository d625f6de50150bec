/** What the chat UIs read from OpenAI-format chat answers, streamed (chunks) or whole. */
/** Text delta of one OpenAI `chat.completion.chunk`, or "" for role-only / usage-only chunks. */
export function chunkDelta(data: string): string {
  try {
    const chunk = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] };
    const content = chunk.choices?.[0]?.delta?.content;
    return typeof content === "string" ? content : "";
  } catch {
    return "";
  }
}

/** Error message carried in a streamed chunk (`{"error":{"message"}}`), if any. */
export function chunkError(data: string): string | undefined {
  try {
    const chunk = JSON.parse(data) as { error?: { message?: unknown } };
    return typeof chunk.error?.message === "string" ? chunk.error.message : undefined;
  } catch {
    return undefined;
  }
}

/** Reply text of a whole (non-streamed) OpenAI `chat.completion`, or "" when it carries none. */
export function completionText(data: string): string {
  try {
    const completion = JSON.parse(data) as { choices?: { message?: { content?: unknown } }[] };
    const content = completion.choices?.[0]?.message?.content;
    return typeof content === "string" ? content : "";
  } catch {
    return "";
  }
}

/** Token counts of a streamed answer, from its last chunk (`stream_options.include_usage`). */
export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

/** The `usage` of a chunk that carries one (the last, with no choices), or of a whole completion; else undefined. */
export function chunkUsage(data: string): ChatUsage | undefined {
  try {
    const usage = (JSON.parse(data) as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null }).usage;
    if (!usage || typeof usage.completion_tokens !== "number") return undefined;
    return { promptTokens: typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : 0, completionTokens: usage.completion_tokens };
  } catch {
    return undefined;
  }
}
