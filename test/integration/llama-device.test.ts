/**
 * Serving on the device that is there: the cloud's llama.cpp loads with SVC_LLAMA_GPU=auto by default, falls back to
 * the CPU with one log line saying why, and /readyz reports the device and each loaded model's offloaded layers.
 * This machine has no GPU: the test asserts the fallback (and skips where node-llama-cpp finds a GPU driver).
 */
import assert from "node:assert/strict";
import { getLlamaGpuTypes } from "node-llama-cpp";
import type { InferenceDeviceReport } from "../../sdk/api/inference.js";
import { pollUntil } from "../support/poll.js";
import { http, newAccount } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

async function readyDevice(cloud: TestCloud, until: (device: InferenceDeviceReport) => boolean = () => true): Promise<InferenceDeviceReport> {
  return pollUntil(
    async () => {
      const res = await fetch(`${cloud.cloudUrl}/readyz`);
      const device = res.status === 200 ? ((await res.json()) as { inference?: { device: InferenceDeviceReport | null } }).inference?.device : undefined;
      return device && until(device) ? device : undefined;
    },
    {
      timeoutMs: 90_000,
      intervalMs: 200,
      description: "/readyz naming the inference device",
      abortIf: () => (cloud.process.exitCode !== null ? `the cloud exited: ${cloud.stderr()}` : undefined),
    },
  );
}

const deviceLines = (cloud: TestCloud) =>
  cloud
    .stderr()
    .split("\n")
    .filter((line) => line.includes("llama.cpp runs on"));

describe("llama.cpp serving device", function () {
  this.timeout(180_000);

  before(async function () {
    if ((await getLlamaGpuTypes("supported")).some((type) => type !== false)) this.skip();
  });

  describe("SVC_LLAMA_GPU unset (auto) on a machine without a GPU driver", () => {
    let cloud: TestCloud;
    before(async () => {
      cloud = await startTestCloud({ env: { SVC_LLAMA_GPU: "", SVC_LLAMA_PRELOAD: "1" } });
    });
    after(async () => cloud?.dispose());

    it("serves on the CPU, says why in one log line, and /readyz reports it", async () => {
      const device = await readyDevice(cloud);
      assert.deepEqual(device, {
        type: "cpu",
        names: [],
        vramTotalBytes: 0,
        vramFreeBytes: 0,
        fallbackReason: "no CUDA, Vulkan or Metal driver found on this machine",
        models: [],
      });
      assert.deepEqual(deviceLines(cloud), ["svc cloud: llama.cpp runs on cpu (SVC_LLAMA_GPU=auto): no CUDA, Vulkan or Metal driver found on this machine"]);
    });

    it("reports a loaded model's layers, none of them offloaded on the CPU", async () => {
      const { token, projectId } = await newAccount(cloud);
      const res = await http(cloud, "POST", "/v1/inference/chat", {
        token,
        body: { projectId, target: { kind: "base_model", name: "svc-tiny" }, messages: [{ role: "user", content: "hi" }], max_tokens: 2 },
      });
      assert.equal(res.status, 200, res.text);
      const device = await readyDevice(cloud, (d) => d.models.length > 0);
      assert.equal(device.models.length, 1);
      assert.equal(device.models[0].file, "svc-tiny.gguf");
      assert.equal(device.models[0].gpuLayers, 0);
      assert.ok(device.models[0].layers > 0, `layers: ${device.models[0].layers}`);
      assert.equal(deviceLines(cloud).length, 1, "the device is logged once, not per model");
    });

    it("tells the endpoint page what serves a deployment (the detail route only)", async () => {
      const { client } = await newAccount(cloud);
      const created = await client.createDeployment({ slug: "device-page", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
      const detail = await client.getDeployment(created.id);
      assert.equal(detail.servedOn?.engine, "llama.cpp");
      assert.deepEqual(detail.servedOn.engine === "llama.cpp" && detail.servedOn.device, await readyDevice(cloud));
      assert.equal((await client.listDeployments()).find((d) => d.id === created.id)?.servedOn, undefined);
    });
  });

  it("a GPU build that was asked for and does not load leaves the CPU serving, with the reason", async () => {
    const cloud = await startTestCloud({ env: { SVC_LLAMA_GPU: "cuda", SVC_LLAMA_PRELOAD: "1" } });
    try {
      const device = await readyDevice(cloud);
      const reason = "the cuda build did not load: its prebuilt binary does not run on this machine (driver or runtime library missing)";
      assert.equal(device.type, "cpu");
      assert.equal(device.fallbackReason, reason);
      assert.deepEqual(deviceLines(cloud), [`svc cloud: llama.cpp runs on cpu (SVC_LLAMA_GPU=cuda): ${reason}`]);
    } finally {
      await cloud.dispose();
    }
  });

  it("SVC_LLAMA_PRELOAD=0 loads llama.cpp at the first local request, and names the device then", async () => {
    const cloud = await startTestCloud({ env: { SVC_LLAMA_GPU: "", SVC_LLAMA_PRELOAD: "0" } });
    try {
      const ready = await fetch(`${cloud.cloudUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(((await ready.json()) as { inference: unknown }).inference, { device: null });
      assert.deepEqual(deviceLines(cloud), []);
      const { token, projectId } = await newAccount(cloud);
      const res = await http(cloud, "POST", "/v1/inference/chat", {
        token,
        body: { projectId, target: { kind: "base_model", name: "svc-tiny" }, messages: [{ role: "user", content: "hi" }], max_tokens: 2 },
      });
      assert.equal(res.status, 200, res.text);
      const device = await readyDevice(cloud, (d) => d.models.length > 0);
      assert.equal(device.type, "cpu");
      assert.equal(device.models[0].file, "svc-tiny.gguf");
      assert.equal(deviceLines(cloud).length, 1);
    } finally {
      await cloud.dispose();
    }
  });
});
