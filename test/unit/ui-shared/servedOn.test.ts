import assert from "node:assert/strict";
import { servedOnSummary } from "../../../ui-shared/servedOn.js";

describe("ui-shared: what serves an endpoint", () => {
  it("names the GPU, its free memory and each model's offloaded layers", () => {
    const device = {
      type: "cuda",
      names: ["NVIDIA H100 80GB HBM3"],
      vramTotalBytes: 80 * 2 ** 30,
      vramFreeBytes: 60 * 2 ** 30,
      models: [{ file: "qwen.gguf", gpuLayers: 29, layers: 29 }],
    };
    assert.equal(
      servedOnSummary({ engine: "llama.cpp", device }),
      "Served by llama.cpp on cuda NVIDIA H100 80GB HBM3, 60.0 GiB of 80.0 GiB free; qwen.gguf: 29/29 layers on the GPU",
    );
  });

  it("says why the CPU serves, and that llama.cpp is still loading", () => {
    const cpu = {
      type: "cpu",
      names: [],
      vramTotalBytes: 0,
      vramFreeBytes: 0,
      fallbackReason: "no CUDA, Vulkan or Metal driver found on this machine",
      models: [],
    };
    assert.equal(
      servedOnSummary({ engine: "llama.cpp", device: cpu }),
      "Served by llama.cpp on the CPU (no CUDA, Vulkan or Metal driver found on this machine)",
    );
    assert.equal(servedOnSummary({ engine: "llama.cpp", device: null }), "Served by llama.cpp (loading)");
    assert.equal(servedOnSummary({ engine: "upstream", url: "http://10.0.0.5:8000/v1" }), "Served by the upstream server http://10.0.0.5:8000/v1");
  });

  it("names an adapter vLLM loads at run time, and why it is not loaded", () => {
    const adapter = { name: "svc-job1", path: "/srv/lora/svc-job1" };
    const url = "http://gpu-box:8000/v1";
    assert.equal(
      servedOnSummary({ engine: "upstream", url, adapter: { ...adapter, state: "loaded", error: null } }),
      "Served by the upstream server http://gpu-box:8000/v1; adapter svc-job1 loaded from /srv/lora/svc-job1",
    );
    const error = "vLLM at http://gpu-box:8000/v1 did not load adapter svc-job1 from /srv/lora/svc-job1: unreachable (ECONNREFUSED)";
    assert.equal(
      servedOnSummary({ engine: "upstream", url, adapter: { ...adapter, state: "failed", error } }),
      `Served by the upstream server http://gpu-box:8000/v1; adapter svc-job1 not loaded: ${error}`,
    );
  });
});
