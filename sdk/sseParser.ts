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
  /** Text of the unfinished line, in the pieces it arrived in (joined once a line end arrives). */
  private pending: string[] = [];
  private pendingLength = 0;
  private dataLines: string[] = [];
  private eventName = "";
  private lastId: string | undefined;

  /**
   * Feeds decoded text; returns the messages completed by it. Linear in the input: a chunk with no
   * line end is only kept, and each line end is searched for once, so one 8 MB `batch` frame
   * arriving in 64 KB chunks costs one pass, not a rescan of the buffered line per chunk.
   */
  feed(text: string): SseMessage[] {
    const previous = this.pendingLength;
    const lastPiece = this.pending[this.pending.length - 1];
    if (text.indexOf("\n") < 0 && text.indexOf("\r") < 0 && !lastPiece?.endsWith("\r")) {
      if (text !== "") this.pending.push(text);
      this.pendingLength += text.length;
      return [];
    }
    const buffer = this.pending.length > 0 ? this.pending.join("") + text : text;
    const messages: SseMessage[] = [];
    let start = 0; // first character of the current line
    // The pending text holds no line end but perhaps a last CR, whose LF may open this chunk.
    let scan = Math.max(0, previous - 1);
    let cr = buffer.indexOf("\r", scan);
    let lf = buffer.indexOf("\n", scan);
    for (;;) {
      // Each search result is reused until passed, so lines without a CR do not rescan for one.
      if (cr >= 0 && cr < scan) cr = buffer.indexOf("\r", scan);
      if (lf >= 0 && lf < scan) lf = buffer.indexOf("\n", scan);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      // A lone trailing CR may be the first half of CRLF: wait for more input.
      if (end === cr && end === buffer.length - 1) break;
      const message = this.line(buffer.slice(start, end));
      if (message) messages.push(message);
      start = scan = end + (end === cr && lf === end + 1 ? 2 : 1);
    }
    const rest = start === 0 ? buffer : buffer.slice(start);
    this.pending = rest === "" ? [] : [rest];
    this.pendingLength = rest.length;
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
