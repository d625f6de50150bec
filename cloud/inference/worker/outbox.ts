/**
 * The inference child's messages to the cloud, coalesced. Each IPC message costs a pipe write in
 * the child (its largest cost after llama.cpp itself), a wake-up and a JSON parse in
 * the cloud, and an SSE chunk; with a small model that rivals the decode, and on a busy machine
 * it is CPU the decode threads need. So:
 * - a generation's first text, and every `done` / `error`, go out at once (time to first token
 *   and the end of an answer are never delayed), together with whatever else is pending;
 * - later text waits at most `intervalMs`, and text of one generation arriving meanwhile is
 *   joined into one message, all generations' messages into one write.
 * The stream stays incremental, at a pace (a few tokens per chunk) no reader can tell from
 * per-token, while the pipe carries a message per interval instead of one per token per stream.
 */
import type { FromWorker } from "./protocol.js";

type TextMessage = Extract<FromWorker, { type: "text" }>;

/** Below a display frame (16 ms), long enough to carry several tokens of a small model. */
export const OUTBOX_INTERVAL_MS = 8;

export class Outbox {
  private pending: FromWorker[] = [];
  /** The pending text message per generation, to append to. */
  private readonly pendingText = new Map<number, TextMessage>();
  /** Generations that have sent text already (their next text may wait). */
  private readonly started = new Set<number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly write: (messages: FromWorker[]) => void,
    private readonly intervalMs = OUTBOX_INTERVAL_MS,
  ) {}

  text(message: TextMessage): void {
    const queued = this.pendingText.get(message.id);
    if (queued) {
      queued.text += message.text;
      if (message.logprobs) (queued.logprobs ??= []).push(...message.logprobs);
      return;
    }
    const copy: TextMessage = { ...message, ...(message.logprobs ? { logprobs: [...message.logprobs] } : {}) };
    this.pending.push(copy);
    this.pendingText.set(message.id, copy);
    if (!this.started.has(message.id)) {
      this.started.add(message.id);
      this.flush();
    } else {
      this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
    }
  }

  /** `done` or `error`: the generation's last message; sends it (and all pending) now. */
  last(message: Extract<FromWorker, { type: "done" | "error" }>): void {
    this.pending.push(message);
    this.started.delete(message.id);
    this.flush();
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const messages = this.pending;
    this.pending = [];
    this.pendingText.clear();
    this.write(messages);
  }
}
