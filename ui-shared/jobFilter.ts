/** Search, status chips and empty states of the Jobs list (SPEC section 4). */
import type { Job, JobStatus } from "../sdk/wire.js";

export type StatusChip = "all" | JobStatus;

/** In the order the spec lists them; exactly one is active. */
export const STATUS_CHIPS: readonly { id: StatusChip; label: string }[] = [
  { id: "all", label: "All" },
  { id: "running", label: "Running" },
  { id: "completed", label: "Completed" },
  { id: "queued", label: "Queued" },
  { id: "failed", label: "Failed" },
  { id: "cancelled", label: "Cancelled" },
];

export const EMPTY_NO_JOBS = "No jobs yet";
export const EMPTY_NO_MATCHES = "No matches";

export function matchesQuery(job: Pick<Job, "id" | "name">, query: string): boolean {
  const needle = query.trim().toLowerCase();
  if (needle === "") return true;
  return job.name.toLowerCase().includes(needle) || job.id.toLowerCase().includes(needle);
}

/** Keeps server order (the spec wants the list as the server returns it). */
export function filterJobs<T extends Pick<Job, "id" | "name" | "status">>(jobs: readonly T[], query: string, chip: StatusChip): T[] {
  return jobs.filter((job) => (chip === "all" || job.status === chip) && matchesQuery(job, query));
}

/** Which empty state applies, or undefined when rows are visible. */
export function emptyState(totalJobs: number, visibleJobs: number): string | undefined {
  if (totalJobs === 0) return EMPTY_NO_JOBS;
  if (visibleJobs === 0) return EMPTY_NO_MATCHES;
  return undefined;
}

/** How many jobs the Overview's Recent jobs card lists. */
export const RECENT_JOBS = 5;

/** The newest `count` jobs, newest first (the server lists newest first; sorted anyway, ties by id as the server breaks them). */
export function recentJobs(jobs: readonly Job[], count: number = RECENT_JOBS): Job[] {
  return [...jobs].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id)).slice(0, count);
}
