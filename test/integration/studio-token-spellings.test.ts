/**
 * The studio's token check holds for every spelling of an `/api` path (issue 26 part 1): the router
 * decodes `%61pi` to `api`, so a check of the raw URL let `POST /%61pi/train` start `svc start`
 * from any web page. Each route of the studio's contract is sent in hundreds of spellings without
 * the token: none may reach a handler (403 or 404, and nothing happens: no `svc` child, no
 * credentials or project state written, no training run); with the token, the plain spelling works.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { startStudioStack, type StudioStack } from "../support/studioStack.js";
import { createStudioServer, type StudioServer } from "../../studio/index.js";
import { studioApi, studioDownloads, studioStreams } from "../../sdk/api/studio.js";
import { repoRoot } from "../support/cloud.js";
import { pathSpellings } from "../support/pathSpellings.js";

const MISSING_ID = "00000000-0000-4000-8000-000000000000";

/** Spellings that are no path at all, refused (400) before routing: by Node's parser (a target without a leading `/`) or the router (a lone `%`). */
const UNREADABLE = new Set(["malformed_request", "invalid_url"]);

/** Every route of the studio's contract as method and a path with its parameters filled. */
function studioRoutes(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const route of Object.values({ ...studioApi, ...studioStreams, ...studioDownloads })) {
    const filled = route.path.replace(/:[A-Za-z]+/g, MISSING_ID);
    seen.set(`${route.method} ${filled}`, { method: route.method, path: filled });
  }
  return [...seen.values()];
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request with the target sent exactly as written. `headersOnly` returns at the status line (a run's stream
 * never ends by itself), as does any success without `token`: such an answer is a failure already, and may be one.
 */
function send(studio: StudioServer, method: string, target: string, options: { token?: string; body?: string; headersOnly?: boolean } = {}): Promise<Answer> {
  const headers: Record<string, string> = { host: `127.0.0.1:${studio.port}` };
  if (options.token) headers["x-svc-studio-token"] = options.token;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port: studio.port, method, path: target, headers, agent: false }, (response) => {
      const answer = { status: response.statusCode ?? 0, headers: response.headers, text: "" };
      if (options.headersOnly || (!options.token && answer.status < 400)) {
        response.destroy();
        resolve(answer);
        return;
      }
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (answer.text += chunk));
      response.on("end", () => resolve(answer));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(options.body);
  });
}

/** The error of an answer in the studio's envelope, or undefined. */
function errorOf(answer: Answer): { code?: string; message?: string } | undefined {
  try {
    return (JSON.parse(answer.text) as { error?: { code?: string; message?: string } }).error;
  } catch {
    return undefined;
  }
}

const errorCode = (answer: Answer) => errorOf(answer)?.code;

/**
 * Refused before any /api handler: by the guard (403), by the router or the SPA's files (404 "no route" / "no file":
 * a relayed cloud 404 would mean a handler ran), or as no path at all.
 */
function refusedBeforeHandlers(answer: Answer): boolean {
  const error = errorOf(answer);
  if (answer.status === 403) return error?.code === "invalid_studio_token";
  if (answer.status === 404) return error?.code === "not_found" && /^no (route|file) /.test(error.message ?? "");
  return answer.status === 400 && UNREADABLE.has(error?.code ?? "");
}

describe("studio token: every spelling of an /api path", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let studio: StudioServer;
  let svcLog: string;

  before(async () => {
    stack = await startStudioStack();
    // The real CLI, behind a script that first notes each invocation: a spelling that reached the
    // manifest, preview or train handler would leave a line here.
    svcLog = path.join(stack.tmp.path, "svc-invocations.log");
    writeFileSync(svcLog, "");
    const recorder = path.join(stack.tmp.path, "recording-svc.mjs");
    writeFileSync(
      recorder,
      `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(svcLog)}, JSON.stringify(process.argv.slice(2)) + "\\n");\nawait import(${JSON.stringify(new URL(`file://${path.join(repoRoot, "dist", "cli.mjs")}`).href)});\n`,
    );
    studio = await createStudioServer({ projectDir: stack.projectDir, host: "127.0.0.1", port: 0, svcCommand: [process.execPath, recorder] });
  });
  after(async () => {
    await studio?.close();
    await stack?.stop();
  });

  const credentialsPath = () => path.join(process.env.SVC_HOME!, "credentials.json");
  const statePath = () => path.join(stack.projectDir, ".svc", "state.json");

  it("answers no spelling without the token from a handler, and nothing happens", async () => {
    const origin = `http://127.0.0.1:${studio.port}`;
    const tried: string[] = [];
    const reached: string[] = [];
    const statuses = new Map<number, number>();
    for (const route of studioRoutes()) {
      for (const target of [route.path, ...pathSpellings(route.path, origin)]) {
        const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
        const answer = await send(studio, route.method, target, { body });
        tried.push(`${route.method} ${target}`);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (!refusedBeforeHandlers(answer)) reached.push(`${route.method} ${target} -> ${answer.status} ${answer.text.slice(0, 120)}`);
      }
    }
    console.log(
      `      ${tried.length} requests without the token (${tried.length - studioRoutes().length} spellings and the plain path of ${studioRoutes().length} routes); statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    assert.ok(tried.length >= 1000, `only ${tried.length} spellings`);
    assert.deepEqual(reached, [], `${reached.length} spellings were not refused`);
    assert.equal(readFileSync(svcLog, "utf8"), "", "no svc child may have been started");
    assert.equal(existsSync(credentialsPath()), false, "no credentials may have been minted");
    assert.equal(existsSync(statePath()), false, "no project state may have been written");
    const status = await send(studio, "GET", "/api/train", { token: studio.token });
    assert.deepEqual(JSON.parse(status.text), { running: false });
  });

  it("answers the plain spelling of every route with the token (past the guard and the router)", async () => {
    for (const route of studioRoutes()) {
      const isTrain = route.method === "POST" && route.path === "/api/train";
      const body = route.method === "GET" || route.method === "DELETE" ? undefined : "{}";
      const answer = await send(studio, route.method, route.path, { token: studio.token, body, headersOnly: isTrain });
      const label = `${route.method} ${route.path} -> ${answer.status} ${answer.text.slice(0, 200)}`;
      assert.notEqual(errorCode(answer), "invalid_studio_token", label);
      assert.ok(!/no route/.test(answer.text), label);
      assert.ok(answer.status < 500 || errorCode(answer) === "cloud_unreachable", label);
      if (isTrain) {
        assert.equal(answer.status, 200, label);
        // The run outlives the request; Stop ends it (and cancels its job) before the next route.
        const stopped = await send(studio, "DELETE", "/api/train", { token: studio.token });
        assert.equal(stopped.status, 200, stopped.text);
      }
    }
    assert.match(readFileSync(svcLog, "utf8"), /"start"/, "the train route started svc start");
  });
});
