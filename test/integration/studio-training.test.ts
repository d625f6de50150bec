/**
 * The studio's subprocess routes and the event relay against a real cloud with one real training
 * worker: `/api/manifest` in its three states, `/api/train` (one run at a time, the run outliving
 * a closed request), and `/api/jobs/:id/events` forwarding the cloud's frames unchanged with resume.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { BROKEN_SOURCE, NO_TRAINER_SOURCE, startStudioStack, studioRequest, writeProject, type StudioStack } from "../support/studioStack.js";
import { pollUntil } from "../support/poll.js";
import type { Job } from "../../sdk/wire.js";

describe("studio server: manifest, training runs and the event relay", function () {
  this.timeout(120_000);
  let stack: StudioStack;

  before(async () => {
    stack = await startStudioStack({ workers: 1, maxSteps: 12 });
  });
  after(async () => {
    await stack?.stop();
  });

  const api = (route: string, init: RequestInit = {}) =>
    fetch(`${stack.studio.url}${route}`, { ...init, headers: { "x-svc-studio-token": stack.studio.token, ...(init.headers as Record<string, string>) } });

  describe("GET /api/manifest", () => {
    it("ok: the registered trainer's name", async () => {
      const res = await studioRequest(stack.studio, "GET", "/api/manifest");
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {
        status: "ok",
        trainer: { name: "quickstart-json-answers", datasets: ["data/train.jsonl", "data/eval.jsonl"], byteTokenLimit: 160 },
      });
    });

    it("none: the build loaded but exposed no trainer", async () => {
      const studio = await stack.studioFor(writeProject(stack.tmp.path, "empty", NO_TRAINER_SOURCE));
      assert.deepEqual((await studioRequest(studio, "GET", "/api/manifest")).json, { status: "none" });
    });

    it("error: the build failed, with the build's first error line", async () => {
      const studio = await stack.studioFor(writeProject(stack.tmp.path, "broken", BROKEN_SOURCE));
      const res = await studioRequest(studio, "GET", "/api/manifest");
      assert.equal(res.status, 200);
      assert.equal(res.json.status, "error");
      assert.match(res.json.error, /index\.ts:2: /, res.json.error);
    });
  });

  describe("POST /api/train", () => {
    let firstJobId: string;

    it("streams svc start's output; a second run gets 409; closing the request does not stop the run", async () => {
      const abort = new AbortController();
      const first = await api("/api/train", { method: "POST", signal: abort.signal });
      assert.equal(first.status, 200);
      assert.match(String(first.headers.get("content-type")), /^text\/plain/);
      const reader = first.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const queued = await pollUntil(
        async () => {
          const { value, done } = await reader.read();
          if (done) throw new Error(`svc start ended early:\n${text}`);
          text += decoder.decode(value, { stream: true });
          return /job (\S+) queued/.exec(text)?.[1];
        },
        { timeoutMs: 30_000, intervalMs: 0, description: "the `job … queued` line" },
      );
      firstJobId = queued;

      const second = await api("/api/train", { method: "POST" });
      assert.equal(second.status, 409);
      const body = (await second.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, "training_in_progress");

      abort.abort(); // the browser tab goes away mid-run
      const job = await pollUntil(
        async () => {
          const res = await studioRequest(stack.studio, "GET", `/api/jobs/${firstJobId}`);
          return ["completed", "failed", "cancelled"].includes(res.json.status) ? (res.json as Job) : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: "the first job to finish" },
      );
      assert.equal(job.status, "completed", "the run went on after the request closed");
    });

    it("takes the next run once the first has ended, and streams it to the end", async () => {
      const res = await pollUntil(
        async () => {
          const attempt = await api("/api/train", { method: "POST" });
          if (attempt.status === 409) {
            await attempt.body?.cancel();
            return undefined; // svc start is still printing its last lines
          }
          return attempt;
        },
        { timeoutMs: 20_000, intervalMs: 100, description: "the runner to be free" },
      );
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /job \S+ queued: quickstart-json-answers\n/);
      assert.match(text, /step=1 loss=\d/);
      assert.match(text, /job \S+ completed\n$/);
      const jobs = (await studioRequest(stack.studio, "GET", "/api/jobs")).json as Job[];
      assert.equal(jobs.length, 2);
      assert.ok(jobs.some((j) => j.id === firstJobId));
    });

    it("GET /api/jobs/:id/events forwards the cloud's frames unchanged, and resumes after Last-Event-ID", async () => {
      const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
      const direct = await (await fetch(`${stack.cloud.cloudUrl}/v1/jobs/${firstJobId}/events`, { headers: { authorization: `Bearer ${token}` } })).text();
      const relayed = await api(`/api/jobs/${firstJobId}/events`);
      assert.match(String(relayed.headers.get("content-type")), /^text\/event-stream/);
      assert.equal(await relayed.text(), direct);
      assert.match(direct, /^id: 1\nevent: training\.started\n/);
      assert.match(direct, /event: end\n/);

      const resumed = await (await api(`/api/jobs/${firstJobId}/events`, { headers: { "last-event-id": "3" } })).text();
      assert.match(resumed, /^id: 4\n/);
      const directResumed = await (
        await fetch(`${stack.cloud.cloudUrl}/v1/jobs/${firstJobId}/events`, { headers: { authorization: `Bearer ${token}`, "last-event-id": "3" } })
      ).text();
      assert.equal(resumed, directResumed);
      const byQuery = await (await api(`/api/jobs/${firstJobId}/events?lastEventId=3`)).text();
      assert.equal(byQuery, directResumed);
    });

    it("artifacts and cancel pass through", async () => {
      const artifacts = await studioRequest(stack.studio, "GET", `/api/jobs/${firstJobId}/artifacts`);
      assert.equal(artifacts.status, 200);
      assert.ok(artifacts.json.some((a: { kind: string }) => a.kind === "adapter"));
      const cancel = await studioRequest(stack.studio, "POST", `/api/jobs/${firstJobId}/cancel`);
      // Cancelling a finished job: whatever the cloud answers, the studio keeps status and body.
      const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
      const direct = await fetch(`${stack.cloud.cloudUrl}/v1/jobs/${firstJobId}/cancel`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
      assert.equal(cancel.status, direct.status);
    });
  });
});
