/** What a worker says about its devices: nvidia-smi's answer grouped by GPU model, and the words the list shows. */
import assert from "node:assert/strict";
import { parseWorkerFrame } from "../../../cloud/workers/protocol.js";
import { backendsFor, llamaDeviceFact, parseNvidiaSmi } from "../../../cloud/workers/workerFacts.js";
import type { WorkerInfo } from "../../../sdk/api/workers.js";
import { describeDevice, describeDevices, describeLlamaDevice, describeState } from "../../../sdk/workerList.js";

const MIB = 1024 * 1024;

describe("worker facts for the worker list", () => {
  it("groups nvidia-smi's GPUs by model, with their memory in bytes", () => {
    const text = "NVIDIA H100 80GB HBM3, 81559\nNVIDIA H100 80GB HBM3, 81559\nNVIDIA RTX A4000, 16376\n\nnot a gpu line\n";
    assert.deepEqual(parseNvidiaSmi(text), [
      { kind: "cuda", name: "NVIDIA H100 80GB HBM3", memoryBytes: 81559 * MIB, count: 2 },
      { kind: "cuda", name: "NVIDIA RTX A4000", memoryBytes: 16376 * MIB, count: 1 },
    ]);
    assert.deepEqual(parseNvidiaSmi(""), []);
  });

  it("names the backends a worker can train with: what was asked for, torch alone for several ranks", () => {
    assert.deepEqual(backendsFor("tfjs", undefined), ["tfjs"]);
    assert.deepEqual(backendsFor("torch", undefined), ["torch"]);
    assert.deepEqual(backendsFor("auto", { perNode: 2, backend: "gloo" }), ["torch"]);
    assert.deepEqual(backendsFor("auto", undefined, { SVC_PYTHON: "/opt/py/bin/python" }), ["torch", "tfjs"]);
  });

  it("describes the accelerators when there are any, else the CPU", () => {
    const cpu = { kind: "cpu" as const, name: "AMD EPYC 9654", memoryBytes: 512 * 1024 ** 3, count: 16 };
    const gpus = { kind: "cuda" as const, name: "NVIDIA H100 80GB HBM3", memoryBytes: 81559 * MIB, count: 8 };
    assert.equal(describeDevice(cpu), "AMD EPYC 9654 × 16 cores (512 GiB)");
    assert.equal(describeDevices([cpu, gpus]), "NVIDIA H100 80GB HBM3 × 8 (79.6 GiB each)");
    assert.equal(describeDevices([cpu]), "AMD EPYC 9654 × 16 cores (512 GiB)");
    assert.equal(describeDevices([{ kind: "mps", name: "Apple GPU", memoryBytes: 32 * 1024 ** 3, count: 1 }]), "Apple GPU (shared memory)");
    assert.equal(describeDevices([]), "-");
  });

  it("describes llama.cpp's device: the CPU, or the GPU build with its GPUs and free memory", () => {
    const reason = "no CUDA, Vulkan or Metal driver found on this machine";
    assert.equal(describeLlamaDevice({ type: "cpu", names: [], vramTotalBytes: 0, vramFreeBytes: 0, fallbackReason: reason }), "cpu");
    assert.equal(
      describeLlamaDevice({ type: "cuda", names: ["NVIDIA H100 80GB HBM3"], vramTotalBytes: 79.6 * 1024 ** 3, vramFreeBytes: 70.1 * 1024 ** 3 }),
      "cuda (NVIDIA H100 80GB HBM3, 70.1 of 79.6 GiB free)",
    );
    assert.equal(
      describeLlamaDevice({ type: "vulkan", names: [], vramTotalBytes: 8 * 1024 ** 3, vramFreeBytes: 2 * 1024 ** 3 }),
      "vulkan (2.0 of 8.0 GiB free)",
    );
    assert.equal(describeLlamaDevice(null), "-");
  });

  it("names the jobs a worker trains or uploads", () => {
    const worker = { state: "uploading", jobIds: ["job-1"] } as WorkerInfo;
    assert.equal(describeState(worker), "uploading job-1");
    assert.equal(describeState({ ...worker, state: "training" }), "training job-1");
    assert.equal(describeState({ ...worker, state: "idle", jobIds: [] }), "idle");
  });

  it("cuts llama.cpp's device to what the llama frame takes, so that it never costs the link", () => {
    const fact = llamaDeviceFact({
      type: "cuda",
      names: Array(100).fill("G".repeat(500)),
      vramTotalBytes: 10,
      vramFreeBytes: -1,
      fallbackReason: "r".repeat(5000),
    });
    assert.equal(fact.names.length, 64);
    assert.equal(fact.names[0].length, 200);
    assert.equal(fact.vramFreeBytes, 0);
    assert.equal(fact.fallbackReason?.length, 1000);
    assert.ok("message" in parseWorkerFrame(JSON.stringify({ type: "llama", device: fact })));
  });
});
