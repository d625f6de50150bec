/**
 * Stop-string handling for streamed text. Text that might be the start of a stop string is held
 * back until it is known not to be, so a client never receives part of a stop string.
 */
export class StopStringMatcher {
  private pending = '';
  private readonly stops: string[];

  constructor(stops: readonly string[] = []) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  /** Adds generated text; returns what can be emitted now and whether a stop string was hit. */
  push(text: string): { emit: string; stopped: boolean } {
    this.pending += text;
    let firstStop = -1;
    for (const stop of this.stops) {
      const at = this.pending.indexOf(stop);
      if (at !== -1 && (firstStop === -1 || at < firstStop)) firstStop = at;
    }
    if (firstStop !== -1) {
      const emit = this.pending.slice(0, firstStop);
      this.pending = '';
      return { emit, stopped: true };
    }
    const hold = this.longestStopPrefixSuffix();
    const emit = this.pending.slice(0, this.pending.length - hold);
    this.pending = this.pending.slice(this.pending.length - hold);
    return { emit, stopped: false };
  }

  /** Releases held-back text at the end of generation (it was not a stop string after all). */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  /** Length of the longest suffix of `pending` that is a proper prefix of some stop string. */
  private longestStopPrefixSuffix(): number {
    let best = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, this.pending.length); n > best; n--) {
        if (this.pending.endsWith(stop.slice(0, n))) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
