/**
 * The Datasets view's histogram of conversation lengths in tokens, against the run's limit
 * (maxSeqLength, or the model's context): bins of a round width, each `(from, to]` so a limit on
 * a bin edge splits "fits" from "refused" cleanly (a conversation of exactly the limit fits).
 */

export interface HistogramBin {
  /** Lengths above `from`, up to and including `to`. */
  from: number;
  to: number;
  count: number;
  /** Some lengths in this bin are over the limit (all of them when `from >= limit`). */
  overLimit: boolean;
}

export interface LengthHistogram {
  bins: HistogramBin[];
  binWidth: number;
  /** The x axis: 0 to this many tokens. */
  top: number;
  /** The tallest bin's count (the y axis). */
  maxCount: number;
  /** Conversations longer than the limit (the run refuses them). */
  overLimit: number;
  /** Whether the limit is drawn: when it is more than twice the longest conversation, the chart ends before it. */
  limitShown: boolean;
  longest: number;
}

/** `targetBins` is how many bins a chart about 600 px wide reads well with; the width is rounded to 1, 2 or 5 × 10^k. */
export function lengthHistogram(lengths: readonly number[], limit: number | null, targetBins = 24): LengthHistogram {
  let longest = 0;
  for (const length of lengths) if (length > longest) longest = length;
  // Far above every conversation, the limit would squeeze them all into a bin or two: the chart then ends at the
  // longest one and says where the limit is in words.
  const limitShown = limit !== null && limit <= 2 * Math.max(longest, 1);
  const span = Math.max(limitShown ? limit! : 0, longest, 1);
  const binWidth = niceWidth(span / targetBins);
  const count = Math.ceil(span / binWidth);
  const bins: HistogramBin[] = Array.from({ length: count }, (_, i) => ({
    from: i * binWidth,
    to: (i + 1) * binWidth,
    count: 0,
    overLimit: limit !== null && (i + 1) * binWidth > limit,
  }));
  let overLimit = 0;
  for (const length of lengths) {
    bins[Math.min(count - 1, Math.max(0, Math.ceil(length / binWidth) - 1))].count++;
    if (limit !== null && length > limit) overLimit++;
  }
  let maxCount = 0;
  for (const bin of bins) if (bin.count > maxCount) maxCount = bin.count;
  return { bins, binWidth, top: count * binWidth, maxCount, overLimit, limitShown, longest };
}

/** The smallest of 1, 2, 5 × 10^k at least `raw` (and at least 1: tokens are whole). */
export function niceWidth(raw: number): number {
  if (!(raw > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const step of [1, 2, 5, 10]) if (step * power >= raw) return step * power;
  return 10 * power;
}

/** "71–80 tokens: 12 conversations", as a bar's tooltip and the keyboard's readout say it. */
export function binText(bin: HistogramBin): string {
  const range = bin.to - bin.from === 1 ? `${bin.to} tokens` : `${bin.from + 1}–${bin.to} tokens`;
  return `${range}: ${bin.count} conversation${bin.count === 1 ? "" : "s"}`;
}
