/** What a worker says about its devices: nvidia-smi's answer grouped by GPU model, and the words the list shows. */
import assert from "node:assert/strict";
import { backendsFor, parseNvidiaSmi } from "../../../cloud/workers/workerFacts.js";
import { describeDevice, describeDevices } from "../../../sdk/workerList.js";

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
});
