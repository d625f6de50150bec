/** `svc worker`: a training worker for a cloud, on this machine or another one. */
import { runTrainerWorker } from "../../cloud/workers/trainerWorker.js";
import { parseBackendChoice, type BackendChoice } from "../../engine/backends/select.js";
import { type Command, parse } from "../command.js";
import { CliError } from "../output.js";
import { onStopRequest } from "../../sdk/platform/stop.js";

const USAGE = `svc worker --cloud URL [--token T] [--name N] [--work-dir DIR] [--backend auto|torch|tfjs] [--device D] [--shared-files]

Connects to the cloud's control plane and trains queued jobs, one at a time.
--backend picks the compute backend (default: SVC_TRAIN_BACKEND, else auto): torch runs a
Python process with PyTorch on every CPU core or a GPU (--device cuda, cuda:1, mps or cpu;
default cuda > mps > cpu); tfjs is the zero-install one; auto takes torch when python3 (or
SVC_PYTHON) imports torch.
The token is the cloud's worker token (the file worker-token in its data dir); it can also be
given as SVC_WORKER_TOKEN, which keeps it out of the process list.
Base models are downloaded once into the work dir, named by the sha256 of their content (a model
replaced on the cloud is downloaded again). --shared-files reads them from the cloud's own files
instead: only for a worker on the cloud's machine (the cloud's own workers use it).`;

export const workerCommand: Command = {
  name: "worker",
  summary: "run a training worker for a cloud (local or remote)",
  usage: USAGE,
  async run(argv) {
    const { values } = parse(argv, { cloud: { type: "string" }, token: { type: "string" }, name: { type: "string" }, "work-dir": { type: "string" }, backend: { type: "string" }, device: { type: "string" }, "shared-files": { type: "boolean" } }, USAGE);
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
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
    const worker = await runTrainerWorker({ cloudUrl: cloudUrl.replace(/\/+$/, ""), token, name, workDir: values["work-dir"], backend, device, sharedFiles: values["shared-files"] === true });
    process.stderr.write(`svc worker ${name} connected to ${cloudUrl} (backend: ${backend})\n`);
    // Ctrl-C, SIGTERM, or the daemon's drain request (its way to ask on Windows, where a signal kills).
    let stopListening = () => {};
    await new Promise<void>((resolve) => (stopListening = onStopRequest(() => resolve())));
    stopListening();
    worker.stop();
    return 0;
  },
};
