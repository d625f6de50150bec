/**
 * Which deployment a host-form request is for: `Host: <slug>.<deployDomain>`. The deploy domain
 * may carry a port (`localhost:7871`, the local default) or not (a real domain behind a proxy on 443).
 */
export function slugFromHost(host: string | undefined, deployDomain: string): string | null {
  if (!host || !deployDomain) return null;
  const domain = deployDomain.toLowerCase();
  let h = host.toLowerCase();
  if (!domain.includes(":")) h = h.replace(/:\d+$/, "");
  if (!h.endsWith("." + domain)) return null;
  const slug = h.slice(0, -domain.length - 1);
  // One label only: `a.b.<domain>` is not a deployment.
  return slug && !slug.includes(".") ? slug : null;
}

/** The slug of a path-form URL, `/d/<slug>/...`, or null. */
export function pathSlug(url: string): string | null {
  const match = /^\/d\/([^/?#]+)\//.exec(url);
  return match ? decodeURIComponent(match[1]) : null;
}
