/** The worker list in words, the same in the CLI (`svc workers`) and the studio's Workers section. */
import type { WorkerDevice, WorkerInfo, WorkerLlamaDevice } from "./api/workers.js";

/** "NVIDIA H100 80GB HBM3 × 8 (79.6 GiB each)", "Intel Xeon × 16 cores (62.8 GiB)", "Apple GPU (shared memory)". */
export function describeDevice(device: WorkerDevice): string {
  const memory = device.memoryBytes === null ? "" : ` (${gib(device.memoryBytes)}${device.kind === "cuda" && device.count > 1 ? " each" : ""})`;
  if (device.kind === "cpu") return `${device.name} × ${device.count} cores${memory}`;
  if (device.kind === "mps") return `${device.name} (shared memory)`;
  return `${device.name}${device.count > 1 ? ` × ${device.count}` : ""}${memory}`;
}

/** The accelerators when there are any (what a user picks a worker for), else the CPU. */
export function describeDevices(devices: readonly WorkerDevice[]): string {
  const accelerators = devices.filter((d) => d.kind !== "cpu");
  const shown = accelerators.length > 0 ? accelerators : devices;
  return shown.length > 0 ? shown.map(describeDevice).join(", ") : "-";
}

/** "idle", "training 3f2a…", "uploading 3f2a…" (the job ids), "starting", "gone". */
export function describeState(worker: WorkerInfo): string {
  if (worker.state !== "training" && worker.state !== "uploading") return worker.state;
  return `${worker.state} ${worker.jobIds.join(", ")}`;
}

/** "cpu", "cuda (NVIDIA H100 80GB HBM3, 70.1 of 79.6 GiB free)"; "-" until the worker reported it. Why a GPU is not used is `fallbackReason`. */
export function describeLlamaDevice(device: WorkerLlamaDevice | null): string {
  if (!device) return "-";
  if (device.type === "cpu") return "cpu";
  const names = device.names.length > 0 ? `${device.names.join(", ")}, ` : "";
  const fixed = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);
  return `${device.type} (${names}${fixed(device.vramFreeBytes)} of ${fixed(device.vramTotalBytes)} GiB free)`;
}

function gib(bytes: number): string {
  const value = bytes / 1024 ** 3;
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} GiB`;
}
