/**
 * What tells jobs apart when several share a name (every run of a trainer does): the short id, when it was created,
 * and the config values that differ among the jobs of that name. Shown next to the name and put in the accessible
 * names of links and checkboxes, so neither an eye nor a screen reader meets five identical rows.
 */
import type { Job } from "../sdk/wire.js";
import { compareConfigs } from "./configDiff.js";
import { formatDateTime } from "./format.js";
import { shortJobId } from "./targetSummary.js";

/** At most this many differing values per job: the rest are in Compare. */
const MAX_DIFFERENCES = 3;
/** Dataset ids differ whenever the data does; the values a user set are what tell runs apart. */
const ID_KEY = /Ids?$/;

/** Per job id, the config values that differ from other jobs of the same name (`learningRate 0.007`), or "". */
export function configDistinctions(jobs: readonly Pick<Job, "id" | "name" | "config">[]): Map<string, string> {
  const byName = new Map<string, Pick<Job, "id" | "name" | "config">[]>();
  for (const job of jobs) byName.set(job.name, [...(byName.get(job.name) ?? []), job]);
  const out = new Map<string, string>();
  for (const group of byName.values()) {
    const rows = group.length < 2 ? [] : compareConfigs(group.map((job) => job.config ?? {})).filter((row) => row.differs && !ID_KEY.test(row.key));
    group.forEach((job, i) => {
      const parts = rows.slice(0, MAX_DIFFERENCES).map((row) => `${row.key} ${row.values[i] ?? "unset"}`);
      out.set(job.id, parts.join(", "));
    });
  }
  return out;
}

/** `quickstart-json-answers, 3f2a9c1d, created 27 Nov 2026, 12:01:02, learningRate 0.007`: a job's accessible name. */
export function jobAccessibleName(job: Pick<Job, "id" | "name" | "createdAt">, distinction = ""): string {
  return [job.name, shortJobId(job.id), `created ${formatDateTime(job.createdAt)}`, ...(distinction ? [distinction] : [])].join(", ");
}
