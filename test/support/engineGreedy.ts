/**
 * Greedy decoding by an engine backend (tfjs or torch, through their `logits` method), to compare
 * with llama.cpp's greedy (llamaCppReference.ts) token for token.
 */

/** What both compute backends offer a comparison: next-token logits after a sequence of ids. */
export interface LogitsSource {
  logits(ids: readonly number[]): Promise<Float32Array>;
}

/** The next `n` argmax tokens after `ids`, each fed back (no stopping at end-of-generation). */
export async function engineGreedy(source: LogitsSource, ids: readonly number[], n: number): Promise<number[]> {
  const sequence = [...ids];
  const out: number[] = [];
  while (out.length < n) {
    const logits = await source.logits(sequence);
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    out.push(best);
    sequence.push(best);
  }
  return out;
}
