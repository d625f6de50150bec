/**
 * Other spellings of a URL path, for tests of checks that must hold however a client writes the
 * path: percent-encoded letters (either hex case, and encoded twice), letter case, dot segments
 * (plain and encoded), doubled and encoded slashes, backslashes, trailing slashes, `;parameters`,
 * queries and fragments, the absolute form of the request target, and mixes of these. Each is
 * generated from the path, so a new route gets its spellings without a new list.
 */

const pct = (char: string, upperHex: boolean): string => {
  const hex = char.charCodeAt(0).toString(16).padStart(2, "0");
  return `%${upperHex ? hex.toUpperCase() : hex}`;
};

/** Indexes of the path's ASCII letters. */
function letterIndexes(path: string): number[] {
  const indexes: number[] = [];
  for (let i = 0; i < path.length; i++) if (/[A-Za-z]/.test(path[i]!)) indexes.push(i);
  return indexes;
}

function replaceAt(path: string, index: number, by: string): string {
  return path.slice(0, index) + by + path.slice(index + 1);
}

/** Indexes of the path's slashes. */
function slashIndexes(path: string): number[] {
  const indexes: number[] = [];
  for (let i = 0; i < path.length; i++) if (path[i] === "/") indexes.push(i);
  return indexes;
}

/** The spellings of `path` (which starts with `/`), itself excluded, each once. */
export function pathSpellings(path: string, origin: string): string[] {
  const out = new Set<string>();
  const letters = letterIndexes(path);
  const slashes = slashIndexes(path);
  const segments = path.split("/").slice(1);

  // Percent-encoding: each letter alone (both hex cases), all of them, and the first one encoded twice.
  for (const i of letters) {
    out.add(replaceAt(path, i, pct(path[i]!, false)));
    out.add(replaceAt(path, i, pct(path[i]!, true)));
  }
  out.add([...path].map((c) => (/[A-Za-z]/.test(c) ? pct(c, true) : c)).join(""));
  out.add([...path].map((c) => (/[A-Za-z]/.test(c) ? pct(c, false) : c)).join(""));
  out.add(replaceAt(path, letters[0]!, `%25${pct(path[letters[0]!]!, false).slice(1)}`));

  // Case: all upper, each segment upper or capitalised, and each letter flipped alone.
  out.add(path.toUpperCase());
  segments.forEach((segment, n) => {
    const rebuilt = (s: string) => "/" + segments.map((x, m) => (m === n ? s : x)).join("/");
    out.add(rebuilt(segment.toUpperCase()));
    out.add(rebuilt(segment.charAt(0).toUpperCase() + segment.slice(1)));
  });
  for (const i of letters) out.add(replaceAt(path, i, path[i]!.toUpperCase()));

  // At each slash: doubled, a dot segment (plain and encoded), a detour, an encoded or back slash.
  for (const i of slashes) {
    for (const by of ["//", "///", "/./", "/%2e/", "/%2E/", "/x/../", "/x/%2e%2e/", "/x/%2E%2E/", "/.%2e/x/../", "%2F", "%2f", "\\", "%5C", "/;x/", "/%3B/"]) {
      out.add(replaceAt(path, i, by));
    }
  }
  // After each segment: a `;parameter` (as Tomcat reads it), a NUL, a space, an encoded `?`.
  for (let n = 1; n <= segments.length; n++) {
    const head = "/" + segments.slice(0, n).join("/");
    const tail = path.slice(head.length);
    for (const by of [";", ";x", ";x=1", "%00", "%20", "%09", "%3F", "%23"]) out.add(head + by + tail);
  }
  // At the end: trailing slashes and dots, queries (one with a wrong token) and a fragment.
  for (const suffix of ["/", "//", "/.", "/./", "/%2e", "/..", "/x/..", "?", "?a=b", "?studioToken=wrong", "?studioToken=", "#x", "?#", "&a", "%2F", "%"]) {
    out.add(path + suffix);
  }
  // Before the path: a leading dot segment, doubled slash, a detour.
  for (const prefix of ["/.", "/x/..", "/%2e", "/", "/api/.."]) out.add(prefix + path);

  // Mixed: an encoded first letter with each of the other tricks.
  const encodedFirst = replaceAt(path, letters[0]!, pct(path[letters[0]!]!, false));
  for (const suffix of ["/", "?a=b", ";x", "//", "/."]) out.add(encodedFirst + suffix);
  out.add("//" + encodedFirst.slice(1));
  out.add("/./" + encodedFirst.slice(1));
  out.add(encodedFirst.toUpperCase());
  out.add(path.toUpperCase().replace(/\//g, "//") + "/");
  out.add(encodedFirst.replace(/\//g, "/./") + "?x=1");

  // The absolute form of the request target (RFC 9112 3.2.2), plain and with an encoded letter.
  out.add(origin + path);
  out.add(origin + encodedFirst);
  out.add(origin + path + "/");

  out.delete(path);
  return [...out];
}
