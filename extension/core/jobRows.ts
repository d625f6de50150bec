/**
 * What the Jobs tree shows, without VS Code: groups by status, the icon and colour per state, the
 * relative time and the tooltip. The tree provider only turns these into TreeItems.
 */
import type { Job, JobStatus } from "../../sdk/wire.js";
import { formatDateTime } from "../../ui-shared/format.js";

/** Live work first: that is what a user opens the view for. */
export const STATUS_GROUP_ORDER: readonly JobStatus[] = ["running", "queued", "completed", "failed", "cancelled"];

const STATUS_LABELS: Record<JobStatus, string> = {
  running: "Running",
  queued: "Queued",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
};

export interface JobGroup {
  status: JobStatus;
  /** e.g. `Completed`; the count goes into the description. */
  label: string;
  /** In server order (SPEC section 4: the list is shown as the server returns it). */
  jobs: Job[];
}

/** Non-empty groups only, in STATUS_GROUP_ORDER. */
export function groupJobsByStatus(jobs: readonly Job[]): JobGroup[] {
  return STATUS_GROUP_ORDER.map((status) => ({ status, label: STATUS_LABELS[status], jobs: jobs.filter((job) => job.status === status) })).filter(
    (group) => group.jobs.length > 0,
  );
}

export interface StatusIcon {
  /** Codicon id (`loading~spin` animates). */
  id: string;
  /** Theme colour id, so the icon follows the user's theme. */
  color: string;
}

export function statusIcon(status: JobStatus): StatusIcon {
  switch (status) {
    case "running":
      return { id: "loading~spin", color: "charts.blue" };
    case "queued":
      return { id: "clock", color: "charts.yellow" };
    case "completed":
      return { id: "pass", color: "testing.iconPassed" };
    case "failed":
      return { id: "error", color: "testing.iconFailed" };
    case "cancelled":
      return { id: "circle-slash", color: "disabledForeground" };
  }
}

/** Tooltip: the full id (too long for the row), status and exact creation time. */
export function jobTooltip(job: Job): string {
  const lines = [job.name, `ID: ${job.id}`, `Status: ${job.status}`, `Created: ${formatDateTime(job.createdAt)}`];
  if (job.status === "completed") lines.push(`Artifacts: ${job.artifactCount}`);
  if (job.error) lines.push(`Error: ${job.error}`);
  return lines.join("\n");
}

/** `svc.job.<status>`: menus show Cancel for running/queued jobs and Create Endpoint for completed ones. */
export function jobContextValue(job: Pick<Job, "status">): string {
  return `svc.job.${job.status}`;
}
