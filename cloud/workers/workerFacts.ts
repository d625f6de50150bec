/**
 * What a worker tells the cloud about itself in its hello, for the worker list: its machine's host name, the backends
 * it can train with, its devices and its ranks. All of it is cheap to learn (no Python is started): the CPU and memory
 * from Node, CUDA GPUs from `nvidia-smi` where the driver installed it, Apple's GPU from the platform.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import type { BackendChoice } from "../../engine/backends/select.js";
import { worldSize, type TorchRanks } from "../../engine/backends/torch/ranks.js";
import { torchVenvPython } from "../../engine/backends/torch/venv.js";
import type { LlamaDevice } from "../../engine/infer/llamaDevice.js";
import type { WorkerDevice, WorkerLlamaDevice } from "../../sdk/api/workers.js";

export interface HelloFacts {
  host: string;
  backends: string[];
  devices: WorkerDevice[];
  worldSize: number;
}

export async function workerFacts(options: { backend?: BackendChoice; ranks?: TorchRanks }): Promise<HelloFacts> {
  return {
    host: os.hostname(),
    backends: backendsFor(options.backend ?? "auto", options.ranks),
    devices: [cpuDevice(), ...(await cudaDevices()), ...mpsDevices()],
    worldSize: options.ranks ? worldSize(options.ranks) : 1,
  };
}

/**
 * The backends a job may get here: what was asked for, and for `auto` torch only where a Python for it is set up
 * (SVC_PYTHON or `svc setup torch`'s venv); whether that Python imports torch is learnt when a job starts.
 */
export function backendsFor(choice: BackendChoice, ranks: TorchRanks | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  if (choice !== "auto") return [choice];
  if (ranks) return ["torch"];
  const torchSetUp = Boolean(env.SVC_PYTHON) || existsSync(torchVenvPython());
  return torchSetUp ? ["torch", "tfjs"] : ["tfjs"];
}

function cpuDevice(): WorkerDevice {
  const cpus = os.cpus();
  return { kind: "cpu", name: cpus[0]?.model.trim() || os.arch(), memoryBytes: os.totalmem(), count: Math.max(1, cpus.length) };
}

/** Apple silicon's GPU shares the machine's memory. */
function mpsDevices(): WorkerDevice[] {
  if (process.platform !== "darwin" || process.arch !== "arm64") return [];
  return [{ kind: "mps", name: "Apple GPU", memoryBytes: os.totalmem(), count: 1 }];
}

/** The CUDA GPUs, grouped by model; none where `nvidia-smi` is missing or does not answer within seconds. */
function cudaDevices(): Promise<WorkerDevice[]> {
  return new Promise((resolve) => {
    execFile("nvidia-smi", ["--query-gpu=name,memory.total", "--format=csv,noheader,nounits"], { timeout: 5_000 }, (error, stdout) => {
      resolve(error ? [] : parseNvidiaSmi(stdout));
    });
  });
}

/** `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits` lines ("NVIDIA H100 80GB HBM3, 81559", MiB). */
export function parseNvidiaSmi(text: string): WorkerDevice[] {
  const byName = new Map<string, WorkerDevice>();
  for (const line of text.split("\n")) {
    const match = /^(.+),\s*(\d+)\s*$/.exec(line.trim());
    if (!match) continue;
    const name = match[1].trim();
    const known = byName.get(name);
    if (known) known.count++;
    else byName.set(name, { kind: "cuda", name, memoryBytes: Number(match[2]) * 1024 * 1024, count: 1 });
  }
  return [...byName.values()];
}

/**
 * llama.cpp's device as the `llama` frame carries it, cut to the frame's bounds: a frame out of them would cost the
 * link, and the worker would send it again on the next.
 */
export function llamaDeviceFact(device: LlamaDevice): WorkerLlamaDevice {
  return {
    type: device.type.slice(0, 40) || "cpu",
    names: device.names.slice(0, 64).map((name) => name.slice(0, 200)),
    vramTotalBytes: Math.max(0, device.vramTotalBytes || 0),
    vramFreeBytes: Math.max(0, device.vramFreeBytes || 0),
    ...(device.fallbackReason ? { fallbackReason: device.fallbackReason.slice(0, 1000) } : {}),
  };
}
