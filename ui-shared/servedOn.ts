/** One line for the endpoint page: what answers the deployment, and on which device. */
import type { ServedOn, UpstreamAdapter } from "../sdk/api/deployments.js";

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

export function servedOnSummary(servedOn: ServedOn): string {
  if (servedOn.engine === "upstream") return `Served by the upstream server ${servedOn.url}${servedOn.adapter ? `; ${adapterLine(servedOn.adapter)}` : ""}`;
  const device = servedOn.device;
  if (!device) return "Served by llama.cpp (loading)";
  const layers = device.models.map((m) => `${m.file}: ${m.gpuLayers}/${m.layers} layers on the GPU`).join(", ");
  if (device.type === "cpu") {
    return `Served by llama.cpp on the CPU${device.fallbackReason ? ` (${device.fallbackReason})` : ""}`;
  }
  const names = device.names.length ? ` ${device.names.join(", ")}` : "";
  return `Served by llama.cpp on ${device.type}${names}, ${gib(device.vramFreeBytes)} of ${gib(device.vramTotalBytes)} free${layers ? `; ${layers}` : ""}`;
}

/** An adapter vLLM loads at run time: its name there, and whether it is loaded (or why not). */
function adapterLine(adapter: UpstreamAdapter): string {
  if (adapter.state === "loaded") return `adapter ${adapter.name} loaded from ${adapter.path}`;
  if (adapter.state === "failed") return `adapter ${adapter.name} not loaded: ${adapter.error}`;
  return `adapter ${adapter.name} (loaded at the first request)`;
}
