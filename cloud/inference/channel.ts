/**
 * A one-consumer async queue: producers push values (or end / fail it), the consumer iterates.
 * It turns callback-style sources (IPC messages, socket chunks) into the ChatStream iterator.
 */
export class Channel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private ended = false;
  private failure: unknown = null;
  private wake: (() => void) | null = null;
  /** Called once when the consumer stops early (break / return), so the producer can cancel. */
  onAbandon: (() => void) | null = null;

  push(value: T): void {
    if (this.ended) return;
    this.buffer.push(value);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = error;
    this.ended = true;
    this.notify();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let finished = false;
    try {
      while (true) {
        if (this.buffer.length > 0) {
          yield this.buffer.shift()!;
          continue;
        }
        if (this.ended) {
          finished = true;
          if (this.failure !== null) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      if (!finished) {
        this.ended = true;
        this.onAbandon?.();
      }
    }
  }
}
