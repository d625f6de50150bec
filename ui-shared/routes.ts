/** Hash routes of the SPA (SPEC section 1, plus the compare view, the Playground's job preset and the Datasets view). */
export type Route =
  | { view: "overview" }
  | { view: "jobs" }
  | { view: "job"; id: string }
  | { view: "compare"; ids: string[] }
  | { view: "endpoints" }
  | { view: "endpoint"; id: string }
  /** `compare`: side by side, the job's base model beside its adapter (`&compare=base`). */
  | { view: "playground"; jobId?: string; compare?: true }
  | { view: "datasets" }
  | { view: "notFound"; hash: string };

export function parseRoute(hash: string): Route {
  // A link opened through VS Code (openExternal) arrives with its fragment percent-encoded: `#%2Fjobs`.
  if (/^#?%2F/i.test(hash)) hash = safeDecode(hash);
  const [rawPath, query = ""] = hash.replace(/^#/, "").split("?", 2);
  const path = rawPath.replace(/\/+$/, "") || "/";
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { view: "overview" };
  const [section, id, ...rest] = parts;
  if (rest.length > 0) return { view: "notFound", hash };
  if (section === "jobs") return id === undefined ? { view: "jobs" } : { view: "job", id };
  if (section === "compare" && id === undefined) return { view: "compare", ids: idList(params.get("ids")) };
  if (section === "endpoints") return id === undefined ? { view: "endpoints" } : { view: "endpoint", id };
  if (section === "datasets" && id === undefined) return { view: "datasets" };
  if (section === "playground" && id === undefined) {
    const jobId = params.get("job");
    if (!jobId) return { view: "playground" };
    return params.get("compare") === "base" ? { view: "playground", jobId, compare: true } : { view: "playground", jobId };
  }
  return { view: "notFound", hash };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `a,b,,a` -> `[a, b]`: trimmed, no empties, no repeats, in the given order. */
function idList(text: string | null): string[] {
  return [
    ...new Set(
      (text ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

export function jobHref(id: string): string {
  return `#/jobs/${encodeURIComponent(id)}`;
}

export function endpointHref(id: string): string {
  return `#/endpoints/${encodeURIComponent(id)}`;
}

/** The compare view of these jobs (`#/compare?ids=a,b`). */
export function compareHref(ids: readonly string[]): string {
  return `#/compare?ids=${ids.map(encodeURIComponent).join(",")}`;
}

/**
 * The Playground with this job's final adapter chosen (`#/playground?job=<id>`); with `compare`, side by side
 * with the job's base model (`&compare=base`).
 */
export function playgroundHref(jobId: string, { compare = false }: { compare?: boolean } = {}): string {
  return `#/playground?job=${encodeURIComponent(jobId)}${compare ? "&compare=base" : ""}`;
}
