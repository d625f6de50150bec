/**
 * The one llama.cpp runtime of a process. node-llama-cpp is ESM-only and heavy, so it is imported lazily, on first
 * use, both by serving (llama-cpp.ts) and by the vocab-only tokenizer loads of training (gguf-chat-tokenizer.ts).
 */
import type { Llama } from 'node-llama-cpp';
import { cpuFallbackReason, llamaDeviceName, llamaGpuSetting, type LlamaDevice, type LlamaGpuSetting } from './llamaDevice.js';

export type NodeLlamaCpp = typeof import('node-llama-cpp');

export interface LlamaRuntime {
  lib: NodeLlamaCpp;
  llama: Llama;
  /** What it decodes on; its VRAM figures are those of the moment it loaded. */
  device: LlamaDevice;
}

let llamaPromise: Promise<LlamaRuntime> | undefined;

/**
 * One Llama runtime per process, on the best device this machine has (llamaDevice.ts), never compiling (offline
 * machines). A GPU build that does not load leaves the CPU build serving, and `device.fallbackReason` says why.
 */
export function getLlamaRuntime(): Promise<LlamaRuntime> {
  llamaPromise ??= loadLlamaRuntime(llamaGpuSetting());
  return llamaPromise;
}

async function loadLlamaRuntime(setting: LlamaGpuSetting): Promise<LlamaRuntime> {
  const lib = await import('node-llama-cpp');
  // progressLogs off: a build that does not fit this machine is reported once, by our fallback reason.
  const load = (gpu: LlamaGpuSetting) => lib.getLlama({ gpu, build: 'never', progressLogs: false, logLevel: lib.LlamaLogLevel.error });
  const failures: string[] = [];
  let supported: (string | false)[] = [];
  let llama: Llama | undefined;
  if (setting !== false) {
    // The builds whose drivers this machine has (only Metal on Apple Silicon, where no CPU build exists), tried
    // one by one rather than by getLlama's own "auto", so that the reason a GPU build failed is ours to report.
    supported = await lib.getLlamaGpuTypes('supported');
    const candidates = setting === 'auto' ? supported.filter((type): type is 'metal' | 'cuda' | 'vulkan' => type !== false) : [setting];
    for (const gpu of candidates) {
      try {
        llama = await load(gpu);
        break;
      } catch (err) {
        failures.push(`the ${gpu} build did not load: ${whyNotLoaded(lib, err)}`);
      }
    }
  }
  llama ??= await load(false);
  const vram = await llama.getVramState();
  const fallbackReason = llama.gpu === false ? cpuFallbackReason(setting, supported, failures) : undefined;
  const device: LlamaDevice = {
    type: llamaDeviceName(llama.gpu),
    names: llama.gpu === false ? [] : await llama.getGpuDeviceNames(),
    vramTotalBytes: vram.total,
    vramFreeBytes: vram.free,
    ...(fallbackReason ? { fallbackReason } : {}),
  };
  return { lib, llama, device };
}

/** node-llama-cpp's NoBinaryFoundError says only its name: the prebuilt binary failed its test run on this machine. */
function whyNotLoaded(lib: NodeLlamaCpp, err: unknown): string {
  if (err instanceof lib.NoBinaryFoundError) return 'its prebuilt binary does not run on this machine (driver or runtime library missing)';
  return String((err as Error)?.message ?? err).split('\n')[0];
}

/** The runtime's device with its VRAM as it is now (models loaded since take theirs). */
export async function currentLlamaDevice(runtime: LlamaRuntime): Promise<LlamaDevice> {
  if (runtime.llama.gpu === false) return runtime.device;
  const vram = await runtime.llama.getVramState();
  return { ...runtime.device, vramTotalBytes: vram.total, vramFreeBytes: vram.free };
}
