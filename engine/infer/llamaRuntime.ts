/**
 * The one llama.cpp runtime of a process. node-llama-cpp is ESM-only and heavy, so it is imported lazily, on first
 * use, both by serving (llama-cpp.ts) and by the vocab-only tokenizer loads of training (gguf-chat-tokenizer.ts).
 */
import type { Llama } from 'node-llama-cpp';
import { llamaDeviceName, llamaGpuSetting } from './llamaDevice.js';

export type NodeLlamaCpp = typeof import('node-llama-cpp');
let llamaPromise: Promise<{ lib: NodeLlamaCpp; llama: Llama }> | undefined;

/**
 * One Llama runtime per process, on the best device this machine has (llamaDevice.ts), never compiling (offline
 * machines). `onDevice` hears the device chosen, once, when the runtime first loads.
 */
export function getLlamaRuntime(onDevice?: (device: string) => void): Promise<{ lib: NodeLlamaCpp; llama: Llama }> {
  llamaPromise ??= (async () => {
    const lib = await import('node-llama-cpp');
    const llama = await lib.getLlama({ gpu: llamaGpuSetting(), build: 'never', logLevel: lib.LlamaLogLevel.error });
    onDevice?.(llamaDeviceName(llama.gpu));
    return { lib, llama };
  })();
  return llamaPromise;
}
