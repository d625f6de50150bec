/**
 * A really trained quickstart adapter served by the edge (issue 4): the adapter answers in the
 * `{"answer": "..."}` form the quickstart teaches while the base model answers in prose, a
 * checkpoint target serves that checkpoint, and the control plane's /v1/inference/chat gives
 * the same tokens, scoped to the caller's project.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { CloudClient } from "../../sdk/client.js";
import type { Job } from "../../sdk/wire.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount, trainToEnd, uploadQuickstartData, type Account } from "../support/api.js";

const QUESTIONS = ["What color is milk?", "What is the capital of Norway?", "What is the opposite of fast?"];
const CHECKPOINT_STEP = 20;

describe("edge: deployed adapters and checkpoints", function () {
  this.timeout(150_000);
  let cloud: TestCloud;
  let account: Account;
  let client: CloudClient;
  let job: Job;

  before(async () => {
    cloud = await startTestCloud({ workers: 1 });
    account = await newAccount(cloud);
    client = account.client;
    ({ job } = await trainToEnd(client, {
      name: "edge-quickstart",
      ...(await uploadQuickstartData(client)),
      config: {
        model: "svc-tiny",
        maxSteps: 40,
        learningRate: 3e-3,
        batchSize: 8,
        saveSteps: CHECKPOINT_STEP,
        seed: 42,
        lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj", "o_proj"] },
        evalSteps: 20,
      },
    }));
    await client.createDeployment({ slug: "qs-adapter", target: { kind: "adapter", jobId: job.id }, authMode: "none" });
    await client.createDeployment({ slug: "qs-base", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    await client.createDeployment({ slug: "qs-step", target: { kind: "checkpoint", jobId: job.id, step: CHECKPOINT_STEP }, authMode: "none" });
  });
  after(async () => cloud?.dispose());

  const reply = async (slug: string, question: string) => {
    const sdk = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const completion = await sdk.chat.completions.create({ model: "x", messages: [{ role: "user", content: question }], max_tokens: 96, temperature: 0 });
    return completion.choices[0].message.content ?? "";
  };
  const controlPlaneReply = async (target: unknown, question: string, token = account.token) => {
    const res = await fetch(`${cloud.cloudUrl}/v1/inference/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ projectId: account.projectId, target, messages: [{ role: "user", content: question }], max_tokens: 96, stream: false }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("answers in the quickstart's JSON form with the adapter, in prose with the base model", async () => {
    for (const question of QUESTIONS) {
      const tuned = await reply("qs-adapter", question);
      const base = await reply("qs-base", question);
      assert.match(tuned, /^\{"answer": ?"[^"]+"\}$/, `adapter reply to "${question}": ${tuned}`);
      assert.doesNotMatch(base, /^\{"answer"/, `base reply to "${question}": ${base}`);
    }
  });

  it("serves the checkpoint at step N, identical to the control plane's inference of that checkpoint", async () => {
    for (const question of QUESTIONS) {
      const fromEdge = await reply("qs-step", question);
      const { status, body } = await controlPlaneReply({ kind: "checkpoint", jobId: job.id, step: CHECKPOINT_STEP }, question);
      assert.equal(status, 200);
      assert.equal(body.choices[0].message.content, fromEdge);
      assert.notEqual(fromEdge, await reply("qs-base", question));
    }
  });

  it("/v1/inference/chat streams like the edge and stays inside the caller's project", async () => {
    const res = await fetch(`${cloud.cloudUrl}/v1/inference/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${account.token}` },
      body: JSON.stringify({
        projectId: account.projectId,
        target: { kind: "adapter", jobId: job.id },
        messages: [{ role: "user", content: QUESTIONS[0] }],
        max_tokens: 96,
        stream: true,
      }),
    });
    assert.equal(res.status, 200);
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    assert.equal(frames.at(-1), "data: [DONE]");
    const text = frames
      .slice(0, -1)
      .map((f) => JSON.parse(f.slice(6)).choices[0]?.delta.content ?? "")
      .join("");
    assert.equal(text, await reply("qs-adapter", QUESTIONS[0]));

    const stranger = await newAccount(cloud);
    const res2 = await fetch(`${cloud.cloudUrl}/v1/inference/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${stranger.token}` },
      body: JSON.stringify({ projectId: stranger.projectId, target: { kind: "adapter", jobId: job.id }, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(res2.status, 404);
  });
});
