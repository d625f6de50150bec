/**
 * The built SPA (dist/webview): `GET /` is index.html with the per-launch token in
 * `<meta name="svc-studio-token">`; other files are served from the folder as they are. Files are
 * read on request (they are small and few), so a rebuild while the studio runs is picked up.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { StudioError } from "./errors.js";
import { PUBLIC_ROUTE } from "./guard.js";

export const TOKEN_PLACEHOLDER = "__SVC_STUDIO_TOKEN__";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".ttf": "font/ttf",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/**
 * Same-origin only, no framing (clickjacking), no inline script. Inline styles stay allowed:
 * Svelte's `style:` directives and the web components set them.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

export function injectToken(html: string, token: string): string {
  if (!html.includes(TOKEN_PLACEHOLDER)) throw new StudioError(500, "bad_assets", `index.html has no ${TOKEN_PLACEHOLDER} placeholder`);
  return html.split(TOKEN_PLACEHOLDER).join(token);
}

export function registerStaticAssets(app: FastifyInstance, options: { assetsDir: string; token: string }): void {
  const root = path.resolve(options.assetsDir);

  const sendIndex = async (reply: FastifyReply) => {
    const html = await readAsset(root, "index.html");
    return reply
      .header("content-type", CONTENT_TYPES[".html"])
      .header("cache-control", "no-store") // the token changes per launch
      .header("content-security-policy", CONTENT_SECURITY_POLICY)
      .header("x-frame-options", "DENY")
      .header("referrer-policy", "no-referrer")
      .header("x-content-type-options", "nosniff")
      .send(injectToken(html.toString("utf8"), options.token));
  };

  // Public: the browser loads the page and its files without the token (the page is what hands it out).
  app.get("/", { config: PUBLIC_ROUTE }, (_request, reply) => sendIndex(reply));
  app.get("/index.html", { config: PUBLIC_ROUTE }, (_request, reply) => sendIndex(reply));

  app.get<{ Params: { "*": string } }>("/*", { config: PUBLIC_ROUTE }, async (request, reply) => {
    const relative = request.params["*"];
    if (relative === "api" || relative.startsWith("api/")) throw new StudioError(404, "not_found", `no route GET /${relative.split("?")[0]}`);
    const body = await readAsset(root, relative);
    const type = CONTENT_TYPES[path.extname(relative).toLowerCase()] ?? "application/octet-stream";
    return reply.header("content-type", type).header("cache-control", "no-cache").header("x-content-type-options", "nosniff").send(body);
  });
}

/** Reads a file inside `root`; anything outside it, hidden, or missing is a 404. */
async function readAsset(root: string, relative: string): Promise<Buffer> {
  const file = path.resolve(root, relative);
  const inside = file.startsWith(root + path.sep);
  const hidden = relative.split(/[\\/]/).some((part) => part.startsWith("."));
  // A NUL (`%00` decoded) is no file name: the file system would throw, and that is no 500.
  if (!inside || hidden || relative.includes("\0")) throw new StudioError(404, "not_found", `no file ${relative}`);
  try {
    return await fs.readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR") {
      if (relative === "index.html") throw new StudioError(500, "missing_assets", `the studio UI is not built: ${file} is missing (run \`npm run build\`)`);
      throw new StudioError(404, "not_found", `no file ${relative}`);
    }
    throw err;
  }
}
