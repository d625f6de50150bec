/**
 * Which llama.cpp build node-llama-cpp loads. `"auto"` picks the best prebuilt binary this machine can run: Metal on
 * Apple Silicon (the only prebuilt binary for macOS arm64 is the Metal one, so asking for CPU there finds none and
 * throws `NoBinaryFoundError`), CUDA or Vulkan where their runtime is present, the CPU build otherwise.
 * `SVC_LLAMA_GPU` overrides it (`cpu` or `false`, `metal`, `cuda`, `vulkan`, `auto`).
 */
export type LlamaGpuSetting = 'auto' | false | 'metal' | 'cuda' | 'vulkan';

export function llamaGpuSetting(env: NodeJS.ProcessEnv = process.env): LlamaGpuSetting {
  const value = env.SVC_LLAMA_GPU?.trim().toLowerCase();
  if (!value || value === 'auto') return 'auto';
  if (value === 'cpu' || value === 'false') return false;
  if (value === 'metal' || value === 'cuda' || value === 'vulkan') return value;
  throw new Error(`SVC_LLAMA_GPU=${env.SVC_LLAMA_GPU}: expected auto, cpu, metal, cuda or vulkan`);
}

/** The device a loaded runtime decodes on, as the log names it. */
export const llamaDeviceName = (gpu: false | string): string => (gpu === false ? 'cpu' : gpu);

/** Layers to offload: none on the CPU build (0 skips llama.cpp's GPU memory probing), else as many as fit. */
export const llamaGpuLayers = (gpu: false | string): 0 | 'auto' => (gpu === false ? 0 : 'auto');
