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

/**
 * Whether the cloud loads llama.cpp when it starts (the default) or at its first local request
 * (`SVC_LLAMA_PRELOAD=0`: a cloud that only proxies upstream models, or a test suite that starts
 * hundreds of clouds that never chat).
 */
export const llamaPreload = (env: NodeJS.ProcessEnv = process.env): boolean => env.SVC_LLAMA_PRELOAD?.trim() !== '0';

/** The device a loaded runtime decodes on, as the log names it. */
export const llamaDeviceName = (gpu: false | string): string => (gpu === false ? 'cpu' : gpu);

/** Layers to offload: none on the CPU build (0 skips llama.cpp's GPU memory probing), else as many as fit. */
export const llamaGpuLayers = (gpu: false | string): 0 | 'auto' => (gpu === false ? 0 : 'auto');

/** What llama.cpp decodes on in this process, as /readyz and the studio show it. */
export interface LlamaDevice {
  /** `cpu`, or the GPU build that loaded (`cuda`, `vulkan`, `metal`). */
  type: string;
  /** The GPUs as their driver names them; empty on the CPU. */
  names: string[];
  /** Device memory (0 on the CPU); free is what the offload of the next model is sized against. */
  vramTotalBytes: number;
  vramFreeBytes: number;
  /** Why the CPU serves although a GPU was allowed; absent when a GPU serves or the CPU was asked for. */
  fallbackReason?: string;
}

/** How many of a loaded model's layers sit on the device (0 on the CPU). */
export interface LlamaModelPlacement {
  /** The GGUF's file name. */
  file: string;
  gpuLayers: number;
  layers: number;
}

/**
 * Why the CPU build serves: `supported` is what node-llama-cpp found drivers for on this machine, `failures` what
 * each GPU build that was tried said when it did not load.
 */
export function cpuFallbackReason(setting: LlamaGpuSetting, supported: readonly (string | false)[], failures: readonly string[]): string | undefined {
  if (setting === false) return undefined;
  if (failures.length) return failures.join('; ');
  const gpus = supported.filter((type): type is string => type !== false);
  if (setting === 'auto' && gpus.length === 0) return 'no CUDA, Vulkan or Metal driver found on this machine';
  return `no ${setting === 'auto' ? gpus.join(' or ') : setting} build could load`;
}

/** The one line the log gets when the runtime loads: the device, and on a fallback why. */
export function llamaDeviceLogLine(device: LlamaDevice, setting: LlamaGpuSetting): string {
  const asked = `SVC_LLAMA_GPU=${setting === false ? 'cpu' : setting}`;
  if (device.type === 'cpu') {
    return device.fallbackReason ? `llama.cpp runs on cpu (${asked}): ${device.fallbackReason}` : `llama.cpp runs on cpu (${asked})`;
  }
  const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
  const names = device.names.length ? `${device.names.join(', ')}, ` : '';
  return `llama.cpp runs on ${device.type} (${names}${gib(device.vramFreeBytes)} of ${gib(device.vramTotalBytes)} GiB free)`;
}
