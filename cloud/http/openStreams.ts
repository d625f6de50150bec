/**
 * The event streams a cloud process has open. An SSE response never finishes by itself, and the
 * HTTP server's close() waits for every response in flight, so on shutdown the cloud ends them
 * here first; otherwise one open job page keeps `svc cloud serve` alive after SIGINT/SIGTERM.
 */
import type { SseStream } from "./sse.js";

export class OpenStreams {
  private readonly streams = new Set<SseStream>();

  /** Tracks the stream until it closes, whoever closes it. */
  add(stream: SseStream): void {
    this.streams.add(stream);
    void stream.closed.then(() => this.streams.delete(stream));
  }

  /** Bytes the open streams hold for clients that have not taken them yet (slow readers). */
  bufferedBytes(): number {
    let total = 0;
    for (const stream of this.streams) total += stream.bufferedBytes();
    return total;
  }

  /** Ends every open stream; clients see a clean end of body (EventSource then retries). */
  closeAll(): void {
    for (const stream of [...this.streams]) stream.end();
  }
}
