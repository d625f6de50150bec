/**
 * Path and file-name rules that hold on every OS. Node's ESM loader takes only URLs for absolute modules: a plain
 * `C:\...\sdk.mjs` is refused on Windows (`ERR_UNSUPPORTED_ESM_URL_SCHEME`, it reads `c:` as a scheme), so every
 * dynamic import and bundle external is a `file:` URL. And a name we turn into a file name (a model's `qwen3:0.6b`)
 * must not carry characters Windows gives a meaning (`:` opens an NTFS alternate data stream).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The specifier that imports the module at absolute path `file`, on the OS whose path module is `pathModule`. */
export function importSpecifier(file: string, pathModule: path.PlatformPath = path): string {
  if (pathModule.sep === "\\") {
    // pathToFileURL follows the running OS; a Windows path is spelled here so it can be checked on any machine.
    const absolute = pathModule.resolve(file).replace(/\\/g, "/");
    const unc = absolute.startsWith("//");
    const encoded = absolute
      .split("/")
      .map((part, i) => (i === 0 && /^[A-Za-z]:$/.test(part) ? part : encodeURIComponent(part)))
      .join("/");
    return unc ? `file:${encoded}` : `file:///${encoded}`;
  }
  return pathToFileURL(file).href;
}

/** Characters no file name may hold on Windows (and `/`, which none may hold anywhere), plus control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern refuses.
const UNSAFE = /[<>:"/\\|?*\u0000-\u001f]/g;
/** Names Windows reserves for devices, with or without an extension. */
const RESERVED = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;

/**
 * A file name for `name` that is valid and means the same on Windows, macOS and Linux: unsafe characters become `_`
 * followed by their code in hex (`a:b` → `a_3ab`, distinct from `a_b`), trailing dots and spaces (which Windows drops)
 * are escaped the same way, and a reserved device name gets a leading `_`. A name that is already safe keeps its
 * spelling, so files named before this rule are still found.
 */
export function safeFileName(name: string): string {
  let safe = name.replace(UNSAFE, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  safe = safe.replace(/[. ]+$/, (tail) => [...tail].map((c) => `_${c.charCodeAt(0).toString(16)}`).join(""));
  if (safe === "") return "_";
  return RESERVED.test(safe) ? `_${safe}` : safe;
}
