/** Small display helpers shared by the views. */

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

/** Key labels are 1 to 80 characters (SPEC section 8); returns the problem or undefined when valid. */
export function keyLabelProblem(label: string): string | undefined {
  const trimmed = label.trim();
  if (trimmed.length === 0) return "Enter a label (1 to 80 characters).";
  if (trimmed.length > 80) return `Label is ${trimmed.length} characters; the limit is 80.`;
  return undefined;
}

/**
 * Only emptiness is checked here: the cloud owns the slug rules and its 400/409 message is shown
 * verbatim, so the form never rejects a slug the server would accept.
 */
export function slugProblem(slug: string): string | undefined {
  return slug.trim().length === 0 ? "Enter a slug." : undefined;
}
