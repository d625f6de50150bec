/**
 * The studio server against a real cloud (no training worker): the SPA with its token, the Host
 * and CSRF guards, cloud errors passed through, and the project-state semantics of SPEC section 2.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startStudioStack, studioRequest, type StudioStack } from "../support/studioStack.js";
import { createStudioServer } from "../../studio/index.js";
import { TOKEN_PLACEHOLDER } from "../../studio/staticAssets.js";
import { http as cloudHttp } from "../support/api.js";
import { streamJobEvents } from "../../extension/core/jobEventStream.js";

describe("studio server API", function () {
  this.timeout(60_000);
  let stack: StudioStack;

  before(async () => {
    stack = await startStudioStack();
  });
  after(async () => {
    await stack?.stop();
  });

  const statePath = () => path.join(stack.projectDir, ".svc", "state.json");

  describe("SPA", () => {
    it("serves index.html with the per-launch token in its meta tag", async () => {
      const res = await studioRequest(stack.studio, "GET", "/", { token: null });
      assert.equal(res.status, 200);
      assert.match(String(res.headers["content-type"]), /text\/html/);
      assert.ok(res.text.includes(`<meta name="svc-studio-token" content="${stack.studio.token}" />`), res.text);
      assert.ok(!res.text.includes(TOKEN_PLACEHOLDER));
      assert.equal(res.headers["cache-control"], "no-store");
      assert.match(String(res.headers["content-security-policy"]), /frame-ancestors 'none'/);
    });

    it("serves the built assets and refuses paths outside the folder", async () => {
      const js = await studioRequest(stack.studio, "GET", "/app.js", { token: null });
      assert.equal(js.status, 200);
      assert.match(String(js.headers["content-type"]), /text\/javascript/);
      const traversal = await studioRequest(stack.studio, "GET", "/..%2f..%2fpackage.json", { token: null });
      assert.equal(traversal.status, 404);
      assert.equal(traversal.json.error.code, "not_found");
    });

    it("uses a fresh token per launch", async () => {
      const other = await stack.studioFor(stack.projectDir);
      assert.notEqual(other.token, stack.studio.token);
      assert.equal((await studioRequest(other, "GET", "/api/jobs", { token: stack.studio.token })).status, 403);
    });
  });

  describe("guards", () => {
    it("403 without the CSRF token, with our envelope", async () => {
      const res = await studioRequest(stack.studio, "GET", "/api/deployments", { token: null });
      assert.equal(res.status, 403);
      assert.equal(res.json.error.code, "invalid_studio_token");
      assert.equal(typeof res.json.error.message, "string");
    });

    it("403 with a wrong token, also on POST", async () => {
      const res = await studioRequest(stack.studio, "POST", "/api/deployments", {
        token: "x".repeat(43),
        body: { slug: "nope", target: { kind: "base_model", name: "svc-tiny" } },
      });
      assert.equal(res.status, 403);
      assert.equal(res.json.error.code, "invalid_studio_token");
      assert.equal(existsSync(statePath()), false, "a refused request must not create the project state");
    });

    it("accepts the studioToken query parameter only on GET of an event stream (EventSource cannot send headers)", async () => {
      const query = `studioToken=${encodeURIComponent(stack.studio.token)}`;
      const missing = "00000000-0000-4000-8000-000000000000";
      // Past the guard: the cloud's own 404 for an unknown job comes back.
      const stream = await studioRequest(stack.studio, "GET", `/api/jobs/${missing}/events?${query}`, { token: null });
      assert.equal(stream.status, 404, stream.text);
      assert.equal(stream.json.error.code, "not_found");
    });

    it("refuses the studioToken query parameter everywhere else, so a token never rides in a POST's URL (issue 12 item 12)", async () => {
      const query = `studioToken=${encodeURIComponent(stack.studio.token)}`;
      const missing = "00000000-0000-4000-8000-000000000000";
      for (const [method, route, body] of [
        ["GET", "/api/jobs", undefined],
        ["GET", "/api/deployments", undefined],
        ["POST", "/api/deployments", { slug: "via-query", target: { kind: "base_model", name: "svc-tiny" } }],
        ["POST", `/api/jobs/${missing}/cancel`, undefined],
        ["POST", `/api/jobs/${missing}/events`, undefined],
      ] as const) {
        const res = await studioRequest(stack.studio, method, `${route}?${query}`, { token: null, body });
        assert.equal(res.status, 403, `${method} ${route}: ${res.text}`);
        assert.equal(res.json.error.code, "invalid_studio_token");
      }
      assert.equal(existsSync(statePath()), false, "a refused request must not create the project state");
    });

    it("403 for a foreign Host (DNS rebinding), even with the token and for the page itself", async () => {
      for (const host of [
        "evil.example",
        `evil.example:${stack.studio.port}`,
        `127.0.0.1:${stack.studio.port + 1}`,
        "127.0.0.1",
        `127.0.0.1.nip.io:${stack.studio.port}`,
      ]) {
        const api = await studioRequest(stack.studio, "GET", "/api/jobs", { host });
        assert.equal(api.status, 403, host);
        assert.equal(api.json.error.code, "forbidden_host");
        const page = await studioRequest(stack.studio, "GET", "/", { host, token: null });
        assert.equal(page.status, 403, host);
        assert.ok(!page.text.includes(stack.studio.token), "the token must never reach a foreign host");
      }
      for (const host of [`localhost:${stack.studio.port}`, `127.0.0.1:${stack.studio.port}`, `[::1]:${stack.studio.port}`]) {
        assert.equal((await studioRequest(stack.studio, "GET", "/", { host, token: null })).status, 200, host);
      }
    });

    it("accepts a host the embedding vouches for (VS Code's forwarded authority), still only with the token", async () => {
      const forwarded = `127.0.0.1:${stack.studio.port + 2}`;
      assert.equal((await studioRequest(stack.studio, "GET", "/", { host: forwarded, token: null })).status, 403);
      stack.studio.allowHost(forwarded);
      const page = await studioRequest(stack.studio, "GET", "/", { host: forwarded, token: null });
      assert.equal(page.status, 200);
      // The SPA loads its assets and API relative to the page, so a path prefix (code-server's
      // /proxy/<port>/) keeps working.
      assert.match(page.text, /src="app\.js"/);
      assert.equal((await studioRequest(stack.studio, "GET", "/api/jobs", { host: forwarded, token: null })).status, 403);
      assert.equal((await studioRequest(stack.studio, "GET", "/api/jobs", { host: forwarded })).status, 200);
      assert.equal((await studioRequest(stack.studio, "GET", "/", { host: "evil.example", token: null })).status, 403);
    });

    it("answers no CORS preflight", async () => {
      const res = await studioRequest(stack.studio, "OPTIONS", "/api/deployments", {
        token: null,
        headers: { origin: "http://evil.example", "access-control-request-method": "POST", "access-control-request-headers": "x-svc-studio-token" },
      });
      assert.equal(res.status, 403);
      assert.equal(res.headers["access-control-allow-origin"], undefined);
      assert.equal(res.headers["access-control-allow-headers"], undefined);
    });
  });

  describe("credentials and project state", () => {
    it("mints anonymous credentials when the file is absent and never returns a token", async () => {
      rmSync(path.join(process.env.SVC_HOME!, "credentials.json"), { force: true });
      const res = await studioRequest(stack.studio, "POST", "/api/credentials");
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.json).sort(), ["cloudUrl", "kind", "minted"]);
      assert.equal(res.json.kind, "anonymous");
      assert.equal(res.json.minted, true);
      assert.equal(res.json.cloudUrl, stack.cloud.cloudUrl);
      assert.ok(existsSync(path.join(process.env.SVC_HOME!, "credentials.json")));
      const again = await studioRequest(stack.studio, "GET", "/api/credentials");
      assert.equal(again.json.minted, false);
    });

    it("lists no deployments and no jobs without a state file, with no upstream call", async () => {
      // A project on a studio whose credentials point at a cloud that does not exist: any
      // upstream call would fail with 502, so an empty list proves none was made.
      const home = path.join(stack.tmp.path, "dead-home");
      mkdirSync(home, { recursive: true });
      writeFileSync(path.join(home, "credentials.json"), JSON.stringify({ kind: "anonymous", cloudUrl: "http://127.0.0.1:9", token: "t" }));
      const saved = process.env.SVC_HOME;
      process.env.SVC_HOME = home;
      try {
        for (const route of ["/api/deployments", "/api/jobs"]) {
          const res = await studioRequest(stack.studio, "GET", route);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.json, []);
        }
        const unreachable = await studioRequest(stack.studio, "GET", "/api/models");
        assert.equal(unreachable.status, 502);
        assert.equal(unreachable.json.error.code, "cloud_unreachable");
      } finally {
        process.env.SVC_HOME = saved;
      }
      assert.equal(existsSync(statePath()), false);
    });

    it("lists no deployments and no jobs without a state file and without credentials, minting none (issue 12 item 7)", async () => {
      // Minting anonymous credentials is an upstream call (and writes the credentials file).
      const home = path.join(stack.tmp.path, "empty-home");
      mkdirSync(home, { recursive: true });
      const saved = process.env.SVC_HOME;
      process.env.SVC_HOME = home;
      try {
        for (const route of ["/api/deployments", "/api/jobs"]) {
          const res = await studioRequest(stack.studio, "GET", route);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.json, []);
        }
      } finally {
        process.env.SVC_HOME = saved;
      }
      assert.equal(existsSync(path.join(home, "credentials.json")), false, "no anonymous credentials were minted");
      assert.equal(existsSync(statePath()), false);
    });

    it("job events while the cloud is unreachable: an empty 200 event stream with retry, so clients keep reconnecting", async () => {
      // Issue 12: a 502 here made the browser's EventSource give up for good after a cloud restart.
      const home = path.join(stack.tmp.path, "down-home");
      mkdirSync(home, { recursive: true });
      writeFileSync(path.join(home, "credentials.json"), JSON.stringify({ kind: "anonymous", cloudUrl: "http://127.0.0.1:9", token: "t" }));
      const saved = { home: process.env.SVC_HOME, cloud: process.env.SVC_CLOUD_URL };
      process.env.SVC_HOME = home;
      process.env.SVC_CLOUD_URL = "http://127.0.0.1:9"; // nothing listens on the discard port
      const jobId = "00000000-0000-4000-8000-000000000000";
      try {
        const res = await studioRequest(stack.studio, "GET", `/api/jobs/${jobId}/events`, { headers: { "last-event-id": "7" } });
        assert.equal(res.status, 200, res.text);
        assert.match(String(res.headers["content-type"]), /^text\/event-stream/);
        assert.match(res.text, /^retry: \d+\n: /);
        // The VS Code panels' reader (extension host) keeps retrying too instead of failing.
        const abort = new AbortController();
        let interruptions = 0;
        await streamJobEvents(
          { studioUrl: stack.studio.url, token: stack.studio.token, jobId, retryDelayMs: 10 },
          {
            event: () => assert.fail("no events while the cloud is down"),
            events: () => assert.fail("no events while the cloud is down"),
            interrupted: () => ++interruptions >= 3 && abort.abort(),
          },
          abort.signal,
        );
        assert.equal(interruptions, 3);
      } finally {
        process.env.SVC_HOME = saved.home;
        process.env.SVC_CLOUD_URL = saved.cloud;
      }
    });

    it("OAuth credentials and no state: creating a deployment fails with the missing-state message", async () => {
      const home = path.join(stack.tmp.path, "oauth-home");
      mkdirSync(home, { recursive: true });
      const oauth = {
        kind: "oauth",
        cloudUrl: stack.cloud.cloudUrl,
        accessToken: "a",
        refreshToken: "r",
        expiresAt: new Date(Date.now() + 3600_000).toISOString(),
      };
      writeFileSync(path.join(home, "credentials.json"), JSON.stringify(oauth));
      const saved = process.env.SVC_HOME;
      process.env.SVC_HOME = home;
      try {
        const res = await studioRequest(stack.studio, "POST", "/api/deployments", {
          body: { slug: "oauth-bot", target: { kind: "base_model", name: "svc-tiny" } },
        });
        assert.equal(res.status, 409, res.text);
        assert.equal(res.json.error.code, "missing_project_state");
        assert.ok(res.json.error.message.startsWith(`No project state at ${statePath()}.`), res.json.error.message);
      } finally {
        process.env.SVC_HOME = saved;
      }
      assert.equal(existsSync(statePath()), false, "svc never writes the state for OAuth users");
    });

    it("creates the state lazily on the first deployment create (anonymous), then lists it", async () => {
      assert.equal(existsSync(statePath()), false);
      const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
        body: { slug: "studio-bot", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.slug, "studio-bot");
      assert.ok(existsSync(statePath()));
      const list = await studioRequest(stack.studio, "GET", "/api/deployments");
      assert.deepEqual(
        list.json.map((d: { slug: string }) => d.slug),
        ["studio-bot"],
      );
    });
  });

  describe("cloud errors keep status and message", () => {
    it("409 on a duplicate slug with the cloud's own message", async () => {
      const res = await studioRequest(stack.studio, "POST", "/api/deployments", {
        body: { slug: "studio-bot", target: { kind: "base_model", name: "svc-tiny" } },
      });
      assert.equal(res.status, 409);
      assert.equal(res.json.error.code, "slug_taken");
      assert.equal(res.json.error.message, 'The slug "studio-bot" is already taken. Choose another slug.');
    });

    it("relays the cloud's job list as the cloud wrote it: the full list, newest first, byte for byte (issue 15)", async () => {
      const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
      const { projectId } = JSON.parse(readFileSync(statePath(), "utf8"));
      const created: string[] = [];
      for (const name of ["first", 'second \u00e9 "quoted"', "third"]) {
        const res = await cloudHttp(stack.cloud, "POST", "/v1/jobs", { token, body: { projectId, name, config: { maxSteps: 1 } } });
        assert.equal(res.status, 201, res.text);
        created.push(res.body.id);
      }
      const viaStudio = await studioRequest(stack.studio, "GET", "/api/jobs");
      const direct = await cloudHttp(stack.cloud, "GET", `/v1/jobs?projectId=${projectId}`, { token });
      assert.equal(viaStudio.status, 200, viaStudio.text);
      assert.match(String(viaStudio.headers["content-type"]), /^application\/json/);
      assert.equal(viaStudio.text, direct.text);
      assert.deepEqual(
        viaStudio.json.slice(0, 3).map((j: { id: string }) => j.id),
        created.reverse(),
      );
      assert.equal(viaStudio.json[1].name, 'second \u00e9 "quoted"');

      // The cloud tags the list; an unchanged list revalidates with 304, a changed one comes whole.
      const etag = direct.headers.get("etag")!;
      assert.ok(etag, "GET /v1/jobs sent no ETag");
      assert.equal((await cloudHttp(stack.cloud, "GET", `/v1/jobs?projectId=${projectId}`, { token, headers: { "if-none-match": etag } })).status, 304);
      const fourth = await cloudHttp(stack.cloud, "POST", "/v1/jobs", { token, body: { projectId, name: "fourth", config: { maxSteps: 1 } } });
      const changed = await cloudHttp(stack.cloud, "GET", `/v1/jobs?projectId=${projectId}`, { token, headers: { "if-none-match": etag } });
      assert.equal(changed.status, 200);
      assert.equal(changed.body[0].id, fourth.body.id);
      // The studio, which kept the earlier list, relays the changed one.
      const again = await studioRequest(stack.studio, "GET", "/api/jobs");
      assert.equal(again.text, changed.text);
      assert.equal((await studioRequest(stack.studio, "GET", "/api/jobs")).text, changed.text);
    });

    it("404 for an unknown job and deployment, 400 for a bad key label: same status and message as the cloud", async () => {
      const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
      const missing = "00000000-0000-4000-8000-000000000000";
      for (const route of [`/api/jobs/${missing}`, `/api/deployments/${missing}`]) {
        const viaStudio = await studioRequest(stack.studio, "GET", route);
        const direct = await cloudHttp(stack.cloud, "GET", route.replace("/api/", "/v1/"), { token });
        assert.equal(viaStudio.status, direct.status, route);
        assert.equal(viaStudio.status, 404);
        const { code, message } = viaStudio.json.error;
        assert.deepEqual({ code, message }, { code: direct.body.error.code, message: direct.body.error.message });
      }
      const list = await studioRequest(stack.studio, "GET", "/api/deployments");
      const id = list.json[0].id;
      const bad = await studioRequest(stack.studio, "POST", `/api/deployments/${id}/keys`, { body: { label: "x".repeat(81) } });
      assert.equal(bad.status, 400, bad.text);
    });

    it("issues a key (plaintext once), lists prefixes, revokes with 204", async () => {
      const id = (await studioRequest(stack.studio, "GET", "/api/deployments")).json[0].id;
      const issued = await studioRequest(stack.studio, "POST", `/api/deployments/${id}/keys`, { body: { label: "ci" } });
      assert.equal(issued.status, 201, issued.text);
      assert.match(issued.json.key, /^svc_live_/);
      assert.equal(issued.headers["cache-control"], "no-store");
      const keys = await studioRequest(stack.studio, "GET", `/api/deployments/${id}/keys`);
      assert.equal(keys.json.length, 1);
      assert.equal(keys.json[0].key, undefined, "the plaintext is never returned again");
      assert.equal(keys.json[0].prefix, issued.json.key.slice(0, keys.json[0].prefix.length));
      const revoked = await studioRequest(stack.studio, "DELETE", `/api/deployments/${id}/keys/${issued.json.id}`);
      assert.equal(revoked.status, 204);
      const after = await studioRequest(stack.studio, "GET", `/api/deployments/${id}/keys`);
      assert.equal(after.json[0].enabled, false);
    });

    it("PATCH toggles enabled and DELETE removes the deployment", async () => {
      const id = (await studioRequest(stack.studio, "GET", "/api/deployments")).json[0].id;
      const patched = await studioRequest(stack.studio, "PATCH", `/api/deployments/${id}`, { body: { enabled: false } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.enabled, false);
      const extra = await studioRequest(stack.studio, "POST", "/api/deployments", {
        body: { slug: "to-delete", target: { kind: "base_model", name: "svc-tiny" } },
      });
      assert.equal((await studioRequest(stack.studio, "DELETE", `/api/deployments/${extra.json.id}`)).status, 204);
      assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${extra.json.id}`)).status, 404);
    });

    it("unknown /api routes are a 404 envelope", async () => {
      const res = await studioRequest(stack.studio, "GET", "/api/nothing-here");
      assert.equal(res.status, 404);
      assert.equal(res.json.error.code, "not_found");
    });
  });

  describe("inference relay", () => {
    it("streams a base-model chat from the cloud as OpenAI chunks ending with [DONE]", async () => {
      const res = await studioRequest(stack.studio, "POST", "/api/inference/chat", {
        body: { target: { kind: "base_model", name: "svc-tiny" }, messages: [{ role: "user", content: "What does a cow say?" }], stream: true, max_tokens: 12 },
      });
      assert.equal(res.status, 200, res.text);
      assert.match(String(res.headers["content-type"]), /text\/event-stream/);
      const frames = res.text
        .split("\n\n")
        .filter((f) => f.startsWith("data: "))
        .map((f) => f.slice(6));
      assert.equal(frames[frames.length - 1], "[DONE]");
      const text = frames
        .slice(0, -1)
        .map((f) => JSON.parse(f).choices[0]?.delta?.content ?? "")
        .join("");
      assert.ok(text.length > 0, "the model said something");
    });

    it("passes the cloud's 400 through for a bad target", async () => {
      const res = await studioRequest(stack.studio, "POST", "/api/inference/chat", {
        body: { target: { kind: "base_model", name: "no-such-model" }, messages: [{ role: "user", content: "hi" }] },
      });
      assert.equal(res.status, 400);
      assert.equal(res.json.error.message, 'target.name: unknown base model "no-such-model"');
    });
  });

  describe("ports", () => {
    it("takes the next free port when the first is in use, and fails on a strict port", async () => {
      const next = await createStudioServer({ projectDir: stack.projectDir, host: "127.0.0.1", port: stack.studio.port });
      try {
        assert.notEqual(next.port, stack.studio.port);
        assert.ok(next.port > stack.studio.port && next.port <= stack.studio.port + 20);
      } finally {
        await next.close();
      }
      await assert.rejects(createStudioServer({ projectDir: stack.projectDir, host: "127.0.0.1", port: stack.studio.port, strictPort: true }), /in use/);
    });
  });
});
