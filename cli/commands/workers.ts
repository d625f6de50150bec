/** `svc workers`: the training workers linked to the cloud, what they train on and what they do. */
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { ProjectSession } from "../../sdk/session.js";
import type { WorkerInfo } from "../../sdk/api/workers.js";
import { describeDevices, describeLlamaDevice, describeState } from "../../sdk/workerList.js";
import { formatTable } from "../table.js";

const USAGE = `svc workers [--json]

The training workers linked to the cloud (any of its instances): name, host, state (starting, idle,
training JOB, uploading JOB, gone), the backends they train with, their devices, what their llama.cpp
runs on (checkpoint samples; --json says why a GPU is not used), their ranks, and when the cloud last
heard from them. Workers that left within the hour are listed as gone.`;

export const workersCommand: Command = {
  ...listed("workers"),
  usage: USAGE,
  async run(argv) {
    const { values } = parse(argv, { json: { type: "boolean" } }, USAGE);
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    const session = await ProjectSession.open({ projectDir: process.cwd() });
    const workers = await session.client().listWorkers();
    process.stdout.write(values.json ? JSON.stringify(workers) + "\n" : formatWorkerList(workers));
    return 0;
  },
};

export function formatWorkerList(workers: readonly WorkerInfo[], now = Date.now()): string {
  if (workers.length === 0) return "no workers connected (start one with `svc worker`)\n";
  const rows = workers.map((w) => [
    w.name,
    w.host || "-",
    describeState(w),
    w.backends.join(", ") || "-",
    describeDevices(w.devices),
    describeLlamaDevice(w.llamaDevice),
    String(w.worldSize),
    secondsAgo(w.lastSeenAt, now),
  ]);
  return formatTable(["NAME", "HOST", "STATE", "BACKENDS", "DEVICES", "LLAMA.CPP", "RANKS", "LAST SEEN"], rows);
}

function secondsAgo(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}
