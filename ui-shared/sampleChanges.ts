/**
 * What the job page's sample table says about each sample against the checkpoint before: whether
 * it started or stopped passing, or only its answer changed. Pure, so both UIs read the same.
 */
import type { SampleCheckpoint, SampleRow } from "../sdk/wire.js";

export type SampleChange = "first" | "now passes" | "now fails" | "answer changed" | "same";

/** Whether every grader that ran said yes (none ran: not passing), as the cloud counts the pass rate. */
export function rowPasses(row: SampleRow): boolean {
  const grades = Object.values(row.grades).filter((g): g is boolean => g !== null);
  return grades.length > 0 && grades.every(Boolean);
}

/** Each sample's change from the same prompt at `previous` (undefined for checkpoint 0). */
export function sampleChanges(current: SampleCheckpoint, previous: SampleCheckpoint | undefined): SampleChange[] {
  return current.samples.map((row, i) => {
    const before = previous?.samples[i];
    if (!before || before.prompt !== row.prompt) return "first";
    const [was, is] = [rowPasses(before), rowPasses(row)];
    if (!was && is) return "now passes";
    if (was && !is) return "now fails";
    return before.answer === row.answer ? "same" : "answer changed";
  });
}

/** "75%" for a pass rate, "—" when nothing was graded. */
export function passRateText(rate: number | null | undefined): string {
  return rate === null || rate === undefined ? "—" : `${Math.round(rate * 100)}%`;
}
