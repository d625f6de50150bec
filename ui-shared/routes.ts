/** Hash routes of the SPA (SPEC section 1). */
export type Route =
  | { view: "overview" }
  | { view: "jobs" }
  | { view: "job"; id: string }
  | { view: "endpoints" }
  | { view: "endpoint"; id: string }
  | { view: "playground" }
  | { view: "notFound"; hash: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/\/+$/, "") || "/";
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { view: "overview" };
  const [section, id, ...rest] = parts;
  if (rest.length > 0) return { view: "notFound", hash };
  if (section === "jobs") return id === undefined ? { view: "jobs" } : { view: "job", id };
  if (section === "endpoints") return id === undefined ? { view: "endpoints" } : { view: "endpoint", id };
  if (section === "playground" && id === undefined) return { view: "playground" };
  return { view: "notFound", hash };
}

export function jobHref(id: string): string {
  return `#/jobs/${encodeURIComponent(id)}`;
}

export function endpointHref(id: string): string {
  return `#/endpoints/${encodeURIComponent(id)}`;
}
