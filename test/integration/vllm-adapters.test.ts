/**
 * Adapters pushed to vLLM (issue 29 part 3): an endpoint on a really trained adapter whose base model
 * is a registered vLLM upstream with a shared folder gets the adapter's PEFT files written there and
 * loaded with /v1/load_lora_adapter, chats routed to it by name, the old adapter unloaded when it is
 * retargeted, disabled or deleted, and the adapter loaded again when vLLM has restarted. vLLM runs on
 * GPUs, so the server here is `vllmStandIn`, a stand-in implementing vLLM's documented routes that
 * reads the folder it is given (scripts/device/vllm-lora.sh does the same push against real vLLM).
 * Real cloud process, real training worker, the real `openai` client.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import OpenAI from "openai";
import type { CloudClient } from "../../sdk/client.js";
import type { Deployment, Job } from "../../sdk/wire.js";
import { startVllmStandIn, type VllmStandIn } from "../support/vllmStandIn.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { type Account, newAccount, trainToEnd, uploadQuickstartData } from "../support/api.js";

const run = promisify(execFile);
const QUESTION = [{ role: "user" as const, content: "What color is milk?" }];

describe("vLLM upstream: adapters loaded at run time (stand-in server)", function () {
  this.timeout(180_000);
  let standIn: VllmStandIn;
  let cloud: TestCloud;
  let client: CloudClient;
  let account: Account;
  let job: Job;
  let loraDir: string;
  let deployment: Deployment;

  before(async () => {
    standIn = await startVllmStandIn();
    cloud = await startTestCloud({ workers: 1, env: { SVC_UPSTREAM_TIMEOUT_MS: "5000" } });
    account = await newAccount(cloud);
    client = account.client;
    ({ job } = await trainToEnd(client, {
      name: "vllm-push",
      ...(await uploadQuickstartData(client, false)),
      config: {
        model: "svc-tiny",
        maxSteps: 4,
        learningRate: 3e-3,
        batchSize: 2,
        saveSteps: 2,
        seed: 7,
        lora: { r: 4, alpha: 8, targetModules: ["q_proj", "v_proj"] },
      },
    }));
    loraDir = path.join(cloud.home, "shared-lora");
    const env = { ...process.env, SVC_CLOUD_URL: cloud.cloudUrl, SVC_HOME: cloud.home };
    const add = (...args: string[]) => run(process.execPath, [cliPath, "models", "add", "--upstream", standIn.url, ...args, "--data", cloud.dataDir], { env });
    const { stdout } = await add("--name", "vllm-box", "--lora-dir", loraDir);
    assert.match(stdout, new RegExp(`adapters go to ${loraDir} and load at run time: start vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`));
    // The same server told to read the folder where it is not: vLLM refuses the load.
    await add("--name", "vllm-elsewhere", "--lora-dir", loraDir, "--lora-dir-on-server", "/nonexistent/lora");
  });
  after(async () => {
    await cloud?.dispose();
    await standIn?.stop();
  });

  const sdk = (slug: string) => new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "not-needed", maxRetries: 0 });
  const ask = async (slug: string) =>
    (await sdk(slug).chat.completions.create({ model: "ignored", messages: QUESTION, max_tokens: 8 })).choices[0].message.content;
  const artifactSha = (name: string) =>
    createHash("sha256")
      .update(readFileSync(path.join(cloud.dataDir, "artifacts", job.id, name)))
      .digest("hex");
  const artifactConfig = (name: string) => JSON.parse(readFileSync(path.join(cloud.dataDir, "artifacts", job.id, name), "utf8"));
  const finalName = () => `svc-${job.id}`;
  const stepName = () => `svc-${job.id}-step-2`;

  it("loads the adapter's PEFT files from the shared folder when the endpoint is created", async () => {
    deployment = await client.createDeployment({ slug: "on-vllm", target: { kind: "adapter", jobId: job.id, baseModel: "vllm-box" }, authMode: "none" });
    assert.deepEqual(deployment.target, { kind: "adapter", jobId: job.id, baseModel: "vllm-box" });
    const lora = standIn.loras.get(finalName());
    assert.ok(lora, `loaded: ${standIn.calls.join(", ")}`);
    assert.equal(lora.path, path.join(loraDir, finalName()));
    assert.equal(lora.weightsSha256, artifactSha("adapter_model.safetensors"));
    assert.deepEqual(lora.config, artifactConfig("adapter_config.json"));
    const detail = await client.getDeployment(deployment.id);
    assert.deepEqual(detail.servedOn, {
      engine: "upstream",
      url: standIn.url,
      adapter: { name: finalName(), path: lora.path, state: "loaded", error: null },
    });
  });

  it("routes chats to the adapter by name, from the edge and from the Playground's route", async () => {
    const expected = standIn.answerFor(standIn.loras.get(finalName())!);
    assert.equal(await ask("on-vllm"), expected);
    assert.equal(standIn.lastChatModel, finalName());
    standIn.lastChatModel = null;
    const res = await fetch(`${cloud.cloudUrl}/v1/inference/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${account.token}` },
      body: JSON.stringify({ projectId: account.projectId, target: deployment.target, messages: QUESTION, max_tokens: 8, stream: false }),
    });
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, expected);
    assert.equal(standIn.lastChatModel, finalName());
  });

  it("unloads the old adapter and loads the new one when the endpoint is retargeted", async () => {
    standIn.calls.length = 0;
    await client.updateDeployment(deployment.id, { target: { kind: "checkpoint", jobId: job.id, step: 2, baseModel: "vllm-box" } });
    assert.deepEqual(standIn.calls, [`unload ${finalName()}`, `load ${stepName()} ${path.join(loraDir, stepName())}`]);
    const lora = standIn.loras.get(stepName())!;
    assert.equal(lora.weightsSha256, artifactSha("checkpoint-2.adapter_model.safetensors"));
    assert.notEqual(lora.weightsSha256, artifactSha("adapter_model.safetensors"));
    assert.equal(await ask("on-vllm"), standIn.answerFor(lora));
  });

  it("loads the adapter again on the next chat after vLLM restarts", async () => {
    await standIn.restart();
    standIn.calls.length = 0;
    assert.equal(standIn.loras.size, 0);
    const answer = await ask("on-vllm");
    assert.deepEqual(standIn.calls, [`load ${stepName()} ${path.join(loraDir, stepName())}`]);
    assert.equal(answer, standIn.answerFor(standIn.loras.get(stepName())!));
  });

  it("keeps an adapter another endpoint serves, and unloads it with the last one (disable, delete)", async () => {
    const twin = await client.createDeployment({
      slug: "on-vllm-twin",
      target: { kind: "checkpoint", jobId: job.id, step: 2, baseModel: "vllm-box" },
      authMode: "none",
    });
    standIn.calls.length = 0;
    await client.updateDeployment(twin.id, { enabled: false });
    assert.deepEqual(standIn.calls, [], "the other endpoint still serves it");
    await client.deleteDeployment(deployment.id);
    assert.deepEqual(standIn.calls, [`unload ${stepName()}`]);
    assert.equal(standIn.loras.size, 0);
    await client.updateDeployment(twin.id, { enabled: true });
    assert.ok(standIn.loras.has(stepName()), "enabled again, it is loaded again");
    await client.updateDeployment(twin.id, { enabled: false });
    assert.equal(standIn.loras.size, 0);
  });

  it("gives a refused load a readable state and a 502 naming vLLM's reason", async () => {
    const refused = await client.createDeployment({
      slug: "refused-lora",
      target: { kind: "adapter", jobId: job.id, baseModel: "vllm-elsewhere" },
      authMode: "none",
    });
    const adapter = (await client.getDeployment(refused.id)).servedOn;
    assert.ok(adapter?.engine === "upstream" && adapter.adapter?.state === "failed", JSON.stringify(adapter));
    assert.match(adapter.adapter.error ?? "", /did not load adapter svc-.* from \/nonexistent\/lora\/svc-.*: HTTP 404: .*No adapter found/);
    await assert.rejects(ask("refused-lora"), (e: unknown) => {
      assert.ok(e instanceof OpenAI.APIError && e.status === 502, String(e));
      assert.match(e.message, /No adapter found for \/nonexistent\/lora/);
      return true;
    });
  });

  it("answers 502 without hanging while vLLM is down, and serves once it is back", async () => {
    const twin = (await client.listDeployments()).find((d) => d.slug === "on-vllm-twin")!;
    await standIn.stop();
    await client.updateDeployment(twin.id, { enabled: true });
    const detail = await client.getDeployment(twin.id);
    assert.ok(detail.servedOn?.engine === "upstream" && detail.servedOn.adapter?.state === "failed");
    assert.match(detail.servedOn.adapter.error ?? "", /unreachable \(ECONNREFUSED\)/);
    await assert.rejects(ask("on-vllm-twin"), (e: unknown) => e instanceof OpenAI.APIError && e.status === 502 && /unreachable/.test(e.message));
    await standIn.restart();
    assert.equal(await ask("on-vllm-twin"), standIn.answerFor(standIn.loras.get(stepName())!));
  });

  it("refuses a baseModel that loads no adapters", async () => {
    await assert.rejects(
      client.createDeployment({ slug: "on-tiny", target: { kind: "adapter", jobId: job.id, baseModel: "svc-tiny" }, authMode: "none" }),
      /target.baseModel: "svc-tiny" loads no adapters/,
    );
  });
});
