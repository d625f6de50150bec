import type { FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { edgeNotFound } from "./errors.js";

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

/** The slug of a path-form URL, `/d/<slug>/...`, or null (lower-cased, as the routes read it). */
export function pathSlug(url: string): string | null {
  const match = /^\/d\/([^/?#]+)\//.exec(url);
  return match ? decodeURIComponent(match[1]).toLowerCase() : null;
}

/** How each edge route finds its deployment's slug: from the Host header, or from the `/d/:slug` path. */
export function slugReaders(ctx: Pick<CloudContext, "deployDomain" | "edgeUrl">): {
  hostSlug: (r: FastifyRequest) => string;
  pathSlug: (r: FastifyRequest) => string;
} {
  return {
    hostSlug: (request) => {
      const slug = slugFromHost(request.host, ctx.deployDomain);
      if (!slug) throw edgeNotFound(`no deployment answers at host ${request.host}; use http://<slug>.${ctx.deployDomain}/v1 or ${ctx.edgeUrl}/d/<slug>/v1`);
      return slug;
    },
    pathSlug: (request) => (request.params as { slug: string }).slug.toLowerCase(),
  };
}
