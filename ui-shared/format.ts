/** Small display helpers shared by the views. */
import { KEY_LABEL_MAX, keyLabelLength } from "../sdk/keyLabel.js";

/** SPEC: Created is rendered with the locale date-time formatter. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
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
