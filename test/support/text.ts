/**
 * Replaces `from` with `to` in `text`, failing loudly when `from` does not occur exactly once: a test that edits an
 * example's source must not go on, silently testing the unedited example, after the example changes.
 */
export function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0) throw new Error(`replaceOnce: ${JSON.stringify(from)} does not occur in the text`);
  if (text.indexOf(from, at + from.length) >= 0) throw new Error(`replaceOnce: ${JSON.stringify(from)} occurs more than once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}
