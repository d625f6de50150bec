/**
 * How inference learns that the client of a request went away: a queued request leaves the queue,
 * a running generation is cancelled, an upstream request is closed.
 *
 * The inference code accepts anything shaped like an AbortSignal's "abort" event (`CancelSignal`),
 * so a caller may pass a real AbortSignal. The HTTP answers pass a `ClientGone` instead: an
 * AbortController per request, with its EventTarget signal and listener bookkeeping, is a visible
 * share of the edge's CPU per proxied request; this is a flag and a short array.
 */

/** The part of AbortSignal inference uses. */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export class ClientGone implements CancelSignal {
  private listeners: (() => void)[] = [];
  private gone = false;

  get aborted(): boolean {
    return this.gone;
  }

  /** Every listener runs once, at the first abort (as with `{ once: true }` on an AbortSignal). */
  addEventListener(_type: "abort", listener: () => void, _options?: { once?: boolean }): void {
    if (!this.gone) this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at >= 0) this.listeners.splice(at, 1);
  }

  abort(): void {
    if (this.gone) return;
    this.gone = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

/** A ClientGone that aborts when the response closes before it was finished (the client hung up). */
export function clientGoneOf(res: import("node:http").ServerResponse): ClientGone {
  const gone = new ClientGone();
  res.on("close", () => !res.writableFinished && gone.abort());
  return gone;
}
