import assert from "node:assert/strict";
import { llamaDeviceName, llamaGpuLayers, llamaGpuSetting } from "../../../engine/infer/llamaDevice.js";

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

  it("on this machine, \"auto\" loads llama.cpp and names its device", async function () {
    this.timeout(60_000);
    const { getLlamaRuntime } = await import("../../../engine/infer/llama-cpp.js");
    let device: string | undefined;
    const { llama } = await getLlamaRuntime((d) => (device = d));
    assert.equal(device ?? llamaDeviceName(llama.gpu), llamaDeviceName(llama.gpu));
    assert.ok(["cpu", "metal", "cuda", "vulkan"].includes(llamaDeviceName(llama.gpu)));
  });
});
