/**
 * How a route that `produces: "file"` names what it sends: `Content-Disposition: attachment` with the name twice, an
 * ASCII fallback for old readers and the exact name as RFC 8187 UTF-8 (RFC 6266). The cloud writes it, the studio
 * relays it unchanged, and the transports read it back to name the saved file. Pure, so the browser bundles it.
 */

/** The header's value for a file saved as `name`: `attachment; filename="run-1.gguf"; filename*=UTF-8''run-1.gguf`. */
export function contentDisposition(name: string): string {
  // Quotes, backslashes, controls and anything past ASCII have no safe quoted form: "_" in the fallback.
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(name)}`;
}

/** The file name a Content-Disposition header gives (the UTF-8 form first), reduced to a name with no folders; undefined when none. */
export function fileNameOf(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header)?.[1];
  let name: string | undefined;
  if (extended !== undefined) {
    try {
      name = decodeURIComponent(extended.trim());
    } catch {
      name = undefined;
    }
  }
  name ??= /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header)?.[1]?.replace(/\\(.)/g, "$1") ?? /filename\s*=\s*([^;\s]+)/i.exec(header)?.[1];
  // A name is a name, never a path: a server cannot steer a save into another folder.
  const base = name?.split(/[\\/]/).pop()?.trim();
  return base && base !== "." && base !== ".." ? base : undefined;
}

/** RFC 8187's value-chars: letters, digits and `!#$&+-.^_`|~`; everything else percent-encoded as UTF-8. */
function encodeRfc8187(text: string): string {
  return encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
