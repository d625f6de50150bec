import assert from "node:assert/strict";
import { cpuFallbackReason, llamaDeviceLogLine, llamaDeviceName, llamaGpuLayers, llamaGpuSetting } from "../../../engine/infer/llamaDevice.js";

describe("platform: the llama.cpp device", () => {
  it("asks for the best device by default (Metal is the only prebuilt binary on Apple Silicon)", () => {
    assert.equal(llamaGpuSetting({}), "auto");
  });

  it("SVC_LLAMA_GPU chooses one, and a typo is an error rather than a silent CPU", () => {
    assert.equal(llamaGpuSetting({ SVC_LLAMA_GPU: "cpu" }), false);
    assert.equal(llamaGpuSetting({ SVC_LLAMA_GPU: "Metal" }), "metal");
    assert.throws(() => llamaGpuSetting({ SVC_LLAMA_GPU: "gpu" }), /SVC_LLAMA_GPU=gpu: expected auto, cpu, metal, cuda or vulkan/);
  });

  it("names the device for the log and offloads layers only to a GPU", () => {
    assert.equal(llamaDeviceName(false), "cpu");
    assert.equal(llamaDeviceName("metal"), "metal");
    assert.equal(llamaGpuLayers(false), 0);
    assert.equal(llamaGpuLayers("cuda"), "auto");
  });

  it("says why the CPU serves when a GPU was allowed, and nothing when the CPU was asked for", () => {
    assert.equal(cpuFallbackReason(false, [], []), undefined);
    assert.equal(cpuFallbackReason("auto", [false], []), "no CUDA, Vulkan or Metal driver found on this machine");
    assert.equal(cpuFallbackReason("auto", ["cuda", false], ["the cuda build did not load: x"]), "the cuda build did not load: x");
  });

  it("logs one line: the GPU with its memory, or the CPU with the reason", () => {
    const gpu = { type: "cuda", names: ["NVIDIA H100 80GB HBM3"], vramTotalBytes: 80 * 2 ** 30, vramFreeBytes: 79.5 * 2 ** 30 };
    assert.equal(llamaDeviceLogLine(gpu, "auto"), "llama.cpp runs on cuda (NVIDIA H100 80GB HBM3, 79.5 of 80.0 GiB free)");
    const cpu = { type: "cpu", names: [], vramTotalBytes: 0, vramFreeBytes: 0, fallbackReason: "no CUDA, Vulkan or Metal driver found on this machine" };
    assert.equal(llamaDeviceLogLine(cpu, "auto"), "llama.cpp runs on cpu (SVC_LLAMA_GPU=auto): no CUDA, Vulkan or Metal driver found on this machine");
    assert.equal(llamaDeviceLogLine({ ...cpu, fallbackReason: undefined }, false), "llama.cpp runs on cpu (SVC_LLAMA_GPU=cpu)");
  });

  it('on this machine, "auto" loads llama.cpp and reports its device', async function () {
    this.timeout(60_000);
    const { getLlamaRuntime } = await import("../../../engine/infer/llama-cpp.js");
    const { llama, device } = await getLlamaRuntime();
    assert.equal(device.type, llamaDeviceName(llama.gpu));
    assert.ok(["cpu", "metal", "cuda", "vulkan"].includes(device.type));
    if (device.type === "cpu") assert.deepEqual([device.names, device.vramTotalBytes], [[], 0]);
  });
});
