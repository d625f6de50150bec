/**
 * The one incremental Server-Sent Events parser of svc, for every stream read with fetch or
 * node:http: the SDK's job event reader, the extension's job streams and chat, the studio HTTP
 * client, and the cloud's upstream proxy (the browser's EventSource is the only other reader).
 * Follows the WHATWG event-stream rules: CRLF/LF/CR line ends, multi-line `data:`, comments,
 * `event:` and `id:` (which persists, as the last event id does). Browser-safe: no Node built-ins.
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
