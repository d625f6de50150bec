/** `svc worker`: a training worker for a cloud, on this machine or another one. */
import { runTrainerWorker } from "../../cloud/workers/trainerWorker.js";
import { parseBackendChoice, type BackendChoice } from "../../engine/backends/select.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";
import { onStopRequest } from "../../sdk/platform/stop.js";
import { detectTorch } from "../../engine/backends/torch/detect.js";
import { runTorchFollower } from "../../engine/backends/torch/follower.js";
import { describeRanks, worldSize, type TorchRanks } from "../../engine/backends/torch/ranks.js";
import { ranksFromFlags } from "../rankFlags.js";

const USAGE = `svc worker --cloud URL [--token T] [--name N] [--work-dir DIR] [--backend auto|torch|tfjs] [--device D] [--shared-files]
           [--procs N | --gpus N] [--fsdp] [--nodes M --master HOST:PORT [--node-rank R]]

Connects to the cloud's control plane and trains queued jobs, one at a time.
--backend picks the compute backend (default: SVC_TRAIN_BACKEND, else auto): torch runs a
Python process with PyTorch on every CPU core or a GPU (--device cuda, cuda:1, mps or cpu;
default cuda > mps > cpu); tfjs is the zero-install one; auto takes torch when python3 (or
SVC_PYTHON) imports torch.
The token is the cloud's worker token (the file worker-token in its data dir); it can also be
given as SVC_WORKER_TOKEN, which keeps it out of the process list.
Base models are downloaded once into the work dir, named by the sha256 of their content (a model
replaced on the cloud is downloaded again). --shared-files reads them from the cloud's own files
instead: only for a worker on the cloud's machine (the cloud's own workers use it).
--procs N trains each job as N CPU processes (torch DDP over gloo), --gpus N as one process per
GPU (NCCL), under torchrun; batchSize is per process, so a step takes batchSize × N examples.
--fsdp shards each decoder layer's base weights across those processes (torch FSDP) instead of a
whole copy in each; the same steps and losses as DDP.
--nodes M spreads a job over M machines (each with its --procs/--gpus): node 0 (this command with
--cloud) listens at --master HOST:PORT; on each other machine run
\`svc worker --nodes M --node-rank R --master HOST:PORT\` (no --cloud): it joins every job node 0
starts and needs the base model at the same path (a shared --work-dir); give --fsdp on every node or none.`;

export const workerCommand: Command = {
  ...listed("worker"),
  usage: USAGE,
  async run(argv) {
    const { values } = parse(
      argv,
      {
        cloud: { type: "string" },
        token: { type: "string" },
        name: { type: "string" },
        "work-dir": { type: "string" },
        backend: { type: "string" },
        device: { type: "string" },
        "shared-files": { type: "boolean" },
        procs: { type: "string" },
        gpus: { type: "string" },
        nodes: { type: "string" },
        "node-rank": { type: "string" },
        master: { type: "string" },
        fsdp: { type: "boolean" },
      },
      USAGE,
    );
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    let ranks: TorchRanks | undefined;
    try {
      ranks = ranksFromFlags(values);
    } catch (err) {
      throw new CliError((err as Error).message, 2);
    }
    if (ranks?.nodes && ranks.nodes.rank > 0) return followNodeZero(ranks);
    const cloudUrl = values.cloud ?? process.env.SVC_CLOUD_URL;
    const token = values.token ?? process.env.SVC_WORKER_TOKEN;
    if (!cloudUrl) throw new CliError("--cloud URL is required", 2);
    if (!token) throw new CliError("--token (or SVC_WORKER_TOKEN) is required", 2);
    const name = values.name ?? `worker-${process.pid}`;
    let backend: BackendChoice;
    try {
      backend = values.backend ? parseBackendChoice(values.backend, "--backend") : parseBackendChoice(process.env.SVC_TRAIN_BACKEND);
    } catch (err) {
      throw new CliError((err as Error).message, 2);
    }
    const device = values.device ?? process.env.SVC_TORCH_DEVICE;
    const worker = await runTrainerWorker({
      cloudUrl: cloudUrl.replace(/\/+$/, ""),
      token,
      name,
      workDir: values["work-dir"],
      backend,
      device,
      sharedFiles: values["shared-files"] === true,
      ranks,
    });
    const spread = ranks ? `, ${worldSize(ranks)} ranks (${describeRanks(ranks)})` : "";
    process.stderr.write(`svc worker ${name} connected to ${cloudUrl} (backend: ${backend}${spread})\n`);
    // Ctrl-C, SIGTERM, or the daemon's drain request (its way to ask on Windows, where a signal kills).
    let stopListening = () => {};
    await new Promise<void>((resolve) => (stopListening = onStopRequest(() => resolve())));
    stopListening();
    worker.stop();
    return 0;
  },
};

/** A machine other than node 0: lends its ranks to each job node 0 trains, until stopped. */
async function followNodeZero(ranks: TorchRanks): Promise<number> {
  const found = await detectTorch(process.env.SVC_PYTHON || undefined);
  if (!found.ok) throw new CliError(`--nodes needs the torch backend, which cannot start: ${found.reason}`, 1);
  const stop = new AbortController();
  const stopListening = onStopRequest(() => stop.abort());
  process.stderr.write(
    `svc worker: node ${ranks.nodes!.rank} of ${ranks.nodes!.count}, ${ranks.perNode} rank(s) (${describeRanks(ranks)}), joining jobs at ${ranks.nodes!.master}\n`,
  );
  await runTorchFollower({ python: found.python, ranks, signal: stop.signal, log: (line) => process.stderr.write(`${line}\n`) });
  stopListening();
  return 0;
}
