/**
 * The one rule for deployment key labels (SPEC section 8: 1 to 80 characters), used by the cloud
 * API and by the page so they never disagree. A character is a code point (an emoji counts once,
 * as a user counts it, not twice as UTF-16 does), and surrounding whitespace is not part of the
 * label: a whitespace-only label is empty.
 */

export const KEY_LABEL_MAX = 80;

/** The label as stored and shown. */
export function normalizeKeyLabel(label: string): string {
  return label.trim();
}

/** Length in code points of the normalized label. */
export function keyLabelLength(label: string): number {
  return [...normalizeKeyLabel(label)].length;
}

export function isValidKeyLabel(label: string): boolean {
  const length = keyLabelLength(label);
  return length >= 1 && length <= KEY_LABEL_MAX;
}
