/**
 * Each kind of token does its own job and nothing else, on a real cloud process: a worker token
 * (the one local workers hold, `$data/worker-token`) is refused by every user route of the control
 * API (projects, jobs, datasets, deployments, keys, inference, streams), and user tokens
 * (anonymous and OAuth) are refused by every worker route (the worker link, its file routes, and
 * registering a base model).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import WebSocket from "ws";
import { accountsApi } from "../../sdk/api/accounts.js";
import { uploadDatasetRoute } from "../../sdk/api/datasets.js";
import { deploymentsApi } from "../../sdk/api/deployments.js";
import { inferenceChatRoute } from "../../sdk/api/inference.js";
import { jobAdapterRoute, jobBaseModelRoute, jobEventsRoute, jobListWatchRoute, jobsApi } from "../../sdk/api/jobs.js";
import { keysApi } from "../../sdk/api/keys.js";
import { modelsApi } from "../../sdk/api/models.js";
import { workersApi } from "../../sdk/api/workers.js";
import { pathOf, type AnyRoute } from "../../sdk/api/route.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount, type Account } from "../support/api.js";
import { signIn } from "../support/oauthFlow.js";

/** Every control-API route a user calls; the worker token must reach none of their handlers. */
const USER_ROUTES: Record<string, AnyRoute> = {
  ...accountsApi,
  ...jobsApi,
  ...deploymentsApi,
  ...keysApi,
  listModels: modelsApi.listModels,
  ...workersApi,
  uploadDataset: uploadDatasetRoute,
  jobAdapter: jobAdapterRoute,
  jobBaseModel: jobBaseModelRoute,
  jobEvents: jobEventsRoute,
  jobListWatch: jobListWatchRoute,
  inferenceChat: inferenceChatRoute,
};

interface Answer {
  status: number;
  text: string;
}

/** Sends one request and reads only the status and a short body: event streams stay open otherwise. */
async function send(cloud: TestCloud, method: string, url: string, token: string, body?: { type: string; data: string }): Promise<Answer> {
  const controller = new AbortController();
  const response = await fetch(cloud.cloudUrl + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": body.type } : {}) },
    body: body?.data,
    signal: controller.signal,
  });
  const text = response.headers.get("content-type")?.startsWith("text/event-stream") ? "" : await response.text();
  controller.abort();
  return { status: response.status, text };
}

/** Bodies the contract accepts, so that the only difference between the two tokens is the token. */
function requestFor(name: string, route: AnyRoute, account: Account): { url: string; body?: { type: string; data: string } } {
  const params = { id: "00000000-0000-4000-8000-000000000000", keyId: "00000000-0000-4000-8000-000000000001", step: "1", range: "hour" };
  const query = new URLSearchParams({ projectId: account.projectId, ...(name === "uploadDataset" ? { name: "train.jsonl" } : {}) });
  const url = `${pathOf(route.path, params)}?${query}`;
  const json = (value: unknown) => ({ type: "application/json", data: JSON.stringify(value) });
  switch (name) {
    case "createProject":
      return { url, body: json({ name: "taken over" }) };
    case "createJob":
      return { url, body: json({ projectId: account.projectId, name: "taken over", config: { model: "svc-tiny", maxSteps: 1 } }) };
    case "createDeployment":
      return { url, body: json({ projectId: account.projectId, slug: "taken-over", target: { kind: "base_model", name: "svc-tiny" } }) };
    case "updateDeployment":
      return { url, body: json({ enabled: false }) };
    case "createDeploymentKey":
    case "updateDeploymentKey":
      return { url, body: json({ label: "taken over" }) };
    case "rotateDeploymentKey":
      return { url, body: json({ graceSeconds: 0 }) };
    case "gradeJobSamples":
      return { url, body: json({ grades: {} }) };
    case "inferenceChat":
      return {
        url,
        body: json({ projectId: account.projectId, target: { kind: "base_model", name: "svc-tiny" }, messages: [{ role: "user", content: "hi" }] }),
      };
    case "uploadDataset":
      return {
        url,
        body: {
          type: "application/jsonl",
          data:
            JSON.stringify({
              messages: [
                { role: "user", content: "a" },
                { role: "assistant", content: "b" },
              ],
            }) + "\n",
        },
      };
    default:
      return { url };
  }
}

describe("token roles: a worker token does only worker work, a user token only user work", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let account: Account;
  let workerToken: string;
  let oauthToken: string;

  before(async () => {
    cloud = await startTestCloud();
    account = await newAccount(cloud);
    workerToken = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    oauthToken = (await signIn(cloud)).accessToken;
  });
  after(async () => {
    await cloud?.dispose();
  });

  it("refuses the worker token on every user route of the control API", async () => {
    let refusedBeforeAnyHandler = 0;
    for (const [name, route] of Object.entries(USER_ROUTES)) {
      const { url, body } = requestFor(name, route, account);
      // The worker first: had it created anything (a deployment's slug, say), the user's same request would then fail.
      const asWorker = await send(cloud, route.method, url, workerToken, body);
      const asUser = await send(cloud, route.method, url, account.token, body);
      assert.ok(asUser.status !== 401 && asUser.status !== 403, `${name}: the user's own request passes authentication (${asUser.status} ${asUser.text})`);
      assert.ok(asWorker.status < 200 || asWorker.status >= 300, `${name}: the worker token got ${asWorker.status} ${asWorker.text}`);
      if (asWorker.status === 400) {
        // The contract refused the request before any handler ran, whoever sent it.
        assert.equal(asUser.status, 400, `${name}: ${asUser.text}`);
        continue;
      }
      assert.equal(asWorker.status, 403, `${name}: ${asWorker.text}`);
      assert.match(asWorker.text, /this route needs a user token, not a worker token/, name);
      refusedBeforeAnyHandler++;
    }
    assert.ok(refusedBeforeAnyHandler >= Object.keys(USER_ROUTES).length - 2, `only ${refusedBeforeAnyHandler} routes were checked past validation`);
    assert.equal((await account.client.listProjects()).filter((p) => p.name === "taken over").length, 1, "only the user's own createProject made a project");
  });

  it("refuses user tokens (anonymous and OAuth) on every worker route and on the worker link", async () => {
    const workerRoutes: { method: string; url: string; body?: { type: string; data: string } }[] = [
      { method: "GET", url: "/v1/worker/datasets/00000000-0000-4000-8000-000000000000" },
      { method: "GET", url: "/v1/worker/models/svc-tiny" },
      {
        method: "PUT",
        url: "/v1/worker/jobs/00000000-0000-4000-8000-000000000000/artifacts?name=adapter.gguf&kind=adapter&step=1&claim=1",
        body: { type: "application/octet-stream", data: "x" },
      },
      { method: "POST", url: "/v1/models", body: { type: "application/json", data: JSON.stringify({ name: "taken-over", path: "/etc/passwd" }) } },
    ];
    for (const [who, token] of [
      ["anonymous", account.token],
      ["oauth", oauthToken],
    ] as const) {
      for (const request of workerRoutes) {
        const answer = await send(cloud, request.method, request.url, token, request.body);
        assert.equal(answer.status, 403, `${who} ${request.method} ${request.url}: ${answer.text}`);
        assert.match(answer.text, /this route needs a worker token/);
      }
      assert.equal(await workerLinkStatus(cloud, token), 401, `${who} token on the worker link`);
    }
    // The worker token itself is let in: the refusals above are about the token, not the request.
    assert.equal(await workerLinkStatus(cloud, workerToken), 101);
    assert.equal((await send(cloud, "GET", "/v1/worker/models/svc-tiny", workerToken)).status !== 403, true);
  });
});

/** The HTTP status the worker link's upgrade answers with (101 when it accepts). */
function workerLinkStatus(cloud: TestCloud, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${cloud.cloudUrl.replace(/^http/, "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${token}` } });
    socket.once("unexpected-response", (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once("upgrade", () => {
      resolve(101);
      socket.terminate();
    });
    socket.once("error", (err) => (err.message.includes("terminated") ? undefined : reject(err)));
  });
}
