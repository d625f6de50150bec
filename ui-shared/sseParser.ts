/**
 * Incremental Server-Sent Events parser for streams read with fetch (the chat endpoint is a POST,
 * which EventSource cannot send). Follows the WHATWG event-stream rules that matter here:
 * CRLF/LF/CR line ends, multi-line `data:`, comments, `event:` and `id:`.
 */
export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

export class SseParser {
  private buffer = "";
  private dataLines: string[] = [];
  private eventName = "";
  private lastId: string | undefined;

  /** Feeds decoded text; returns the messages completed by it. */
  feed(text: string): SseMessage[] {
    this.buffer += text;
    const messages: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone trailing CR may be the first half of CRLF: wait for more input.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") {
      if (this.dataLines.length === 0) {
        this.eventName = "";
        return undefined;
      }
      const message = { event: this.eventName || "message", data: this.dataLines.join("\n"), id: this.lastId };
      this.dataLines = [];
      this.eventName = "";
      return message;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.dataLines.push(value);
    else if (field === "event") this.eventName = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    return undefined;
  }
}

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
