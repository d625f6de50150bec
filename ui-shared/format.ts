/** Small display helpers shared by the views. */
import { KEY_LABEL_MAX, keyLabelLength } from "../sdk/keyLabel.js";

/** SPEC: Created is rendered with the locale date-time formatter. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Short relative time (`just now`, `5 min ago`, `3 h ago`, `2 d ago`) for tree rows and key tables; the exact time goes in a tooltip. */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const elapsed = Math.max(0, now - then);
  if (elapsed < MINUTE) return "just now";
  if (elapsed < HOUR) return `${Math.floor(elapsed / MINUTE)} min ago`;
  if (elapsed < DAY) return `${Math.floor(elapsed / HOUR)} h ago`;
  return `${Math.floor(elapsed / DAY)} d ago`;
}

/** A key's best-effort last use (SPEC section 2: a rough check, not auditing). */
export function keyLastUsed(lastUsedAt: string | null, now: number = Date.now()): string {
  return lastUsedAt ? `used ${relativeTime(lastUsedAt, now)}` : "never used";
}

/** Host part of a deployment URL, shown as the slug's suffix in the Endpoints list. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Key labels follow the cloud's rule (sdk/keyLabel.ts); returns the problem or undefined when valid. */
export function keyLabelProblem(label: string): string | undefined {
  const length = keyLabelLength(label);
  if (length === 0) return `Enter a label (1 to ${KEY_LABEL_MAX} characters).`;
  if (length > KEY_LABEL_MAX) return `Label is ${length} characters; the limit is ${KEY_LABEL_MAX}.`;
  return undefined;
}

/**
 * Only emptiness is checked here: the cloud owns the slug rules and its 400/409 message is shown
 * verbatim, so the form never rejects a slug the server would accept.
 */
export function slugProblem(slug: string): string | undefined {
  return slug.trim().length === 0 ? "Enter a slug." : undefined;
}

/**
 * A span of time for the Duration row and the compare table: `45 s`, `3 min 12 s`, `2 h 05 min`.
 * Seconds are dropped past an hour, where they are noise.
 */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** A file size as people read it, in powers of 1024: `812 B`, `14.2 KB`, `3.4 MB`, `1.25 GB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : Number(value.toPrecision(3))} ${units[unit]}`;
}
