import type { LoadProgress } from "../../engine/backends/types.js";

/**
 * Turns tensor-by-tensor load progress into a few readable lines (every 10% at most), e.g.
 * "loading the base model: 40% (0.96 GB of 2.4 GB)", so a large base shows it is moving. A base that
 * loads in a blink (under 100 MB, such as svc-tiny) gets one line when it is loaded.
 */
export function loadProgressReporter(report: (message: string) => void): (progress: LoadProgress) => void {
  let lastDecile = -1;
  return ({ loadedBytes, totalBytes }) => {
    const decile = totalBytes > 0 ? Math.floor((10 * loadedBytes) / totalBytes) : 10;
    if (decile <= lastDecile || (decile < 10 && totalBytes < SMALL_BASE_BYTES)) return;
    lastDecile = decile;
    report(`loading the base model: ${decile * 10}% (${byteSize(loadedBytes, totalBytes)} of ${byteSize(totalBytes, totalBytes)})`);
  };
}

const SMALL_BASE_BYTES = 100e6;

/** `bytes` in the unit that suits `scale`: "1.9 MB", "0.42 GB", "2.4 GB". */
function byteSize(bytes: number, scale: number): string {
  if (scale < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(bytes < 1e9 ? 2 : 1)} GB`;
}
