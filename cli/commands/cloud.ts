/** `svc cloud serve|start|stop|status`: the embedded cloud, in the foreground or as a daemon. */
import { DataDirLockedError } from "../../cloud/lock.js";
import { isAlive } from "../../sdk/fileLock.js";
import { startCloud, type RunningCloud } from "../../cloud/serve.js";
import { parseRetention } from "../../cloud/domain/jobRetention.js";
import { startLocalWorkers } from "../../cloud/workers/localWorkers.js";
import { liveDaemon, readDaemonFile, startDaemon } from "../../sdk/daemon.js";
import { requestDaemonDrain } from "../../sdk/platform/daemonDrain.js";
import { defaultCloudDataDir, DEFAULT_CLOUD_PORT, DEFAULT_EDGE_PORT } from "../../sdk/paths.js";
import { type Command, parse, portOption } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";

const USAGE = `svc cloud <serve|start|stop|status> [options]

  serve    run the cloud in the foreground (prints one JSON line when ready)
  start    run the cloud as a background daemon
  stop     stop the background daemon
  status   show whether the daemon runs, and its URLs

options (serve, start):
  --port P         control-plane port (default ${DEFAULT_CLOUD_PORT}, or SVC_CLOUD_PORT; start: the last one chosen; 0 picks a free port)
  --edge-port E    edge port (default ${DEFAULT_EDGE_PORT}, or SVC_EDGE_PORT; start: the last one chosen; 0 picks a free port)
  --data DIR       data dir (default $SVC_HOME/cloud)
  --workers N      local training workers to start (default 1; 0 for none)
  --retain-jobs D  delete finished jobs (events, artifacts, datasets only they use) that ended
                   more than D ago, e.g. 30d, 12h, 2w; jobs a deployment serves are kept
                   (default: keep every job; also SVC_RETAIN_JOBS)
  --log            log requests to stderr (serve)

environment: SVC_DATABASE_URL=postgres://... stores data in PostgreSQL instead of SQLite;
SVC_DEPLOY_DOMAIN overrides the domain deployments answer under; SVC_MAX_DATASET_BYTES caps
dataset uploads (default 50 MiB), SVC_MAX_ARTIFACT_BYTES a worker's artifact uploads (default
512 MiB); SVC_TRUSTED_PROXIES lists the proxies whose X-Forwarded-For is believed (none by default).`;

const OPTIONS = {
  port: { type: "string" },
  "edge-port": { type: "string" },
  data: { type: "string" },
  log: { type: "boolean" },
  workers: { type: "string" },
  "retain-jobs": { type: "string" },
} as const;

export const cloudCommand: Command = {
  ...listed("cloud"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, OPTIONS, USAGE);
    const sub = positionals[0];
    if (values.help || !sub) {
      process.stdout.write(USAGE + "\n");
      return sub || values.help ? 0 : 2;
    }
    const dataDir = values.data ?? defaultCloudDataDir();
    const port = portOption(values.port, "--port", Number(process.env.SVC_CLOUD_PORT ?? DEFAULT_CLOUD_PORT));
    const edgePort = portOption(values["edge-port"], "--edge-port", Number(process.env.SVC_EDGE_PORT ?? DEFAULT_EDGE_PORT));
    switch (sub) {
      case "serve": {
        const retainJobs = values["retain-jobs"] ?? (process.env.SVC_RETAIN_JOBS || undefined);
        const retainJobsMs = retainJobs === undefined ? undefined : retentionOption(retainJobs);
        return serve({ dataDir, port, edgePort, logger: Boolean(values.log), workers: workerCount(values.workers), retainJobsMs });
      }
      case "start": {
        const live = await liveDaemon(dataDir);
        if (live) {
          process.stdout.write(`svc cloud already running (pid ${live.pid}) at ${live.cloudUrl}\n`);
          return 0;
        }
        // Checked here, so a typo is told in this terminal rather than in the daemon's log.
        if (values["retain-jobs"] !== undefined) retentionOption(values["retain-jobs"]);
        // Ports not given are chosen by startDaemon: SVC_CLOUD_PORT / SVC_EDGE_PORT, else the last ones chosen here.
        const started = await startDaemon({
          dataDir,
          port: values.port === undefined ? undefined : port,
          edgePort: values["edge-port"] === undefined ? undefined : edgePort,
          extraArgs: values["retain-jobs"] !== undefined ? ["--retain-jobs", values["retain-jobs"]] : [],
        });
        process.stdout.write(`svc cloud started (pid ${started.pid})\n  control plane ${started.cloudUrl}\n  edge          ${started.edgeUrl}\n`);
        return 0;
      }
      case "stop":
        return stop(dataDir);
      case "status": {
        const live = await liveDaemon(dataDir);
        if (!live) {
          process.stdout.write(`svc cloud is not running (data dir ${dataDir})\n`);
          return 3;
        }
        process.stdout.write(
          `svc cloud running (pid ${live.pid})\n  control plane ${live.cloudUrl}\n  edge          ${live.edgeUrl}\n  deploy domain ${live.deployDomain}\n`,
        );
        return 0;
      }
      default:
        throw new CliError(`unknown subcommand "cloud ${sub}"\nusage: svc cloud <serve|start|stop|status>`, 2);
    }
  },
};

function retentionOption(value: string): number {
  try {
    return parseRetention(value);
  } catch (err) {
    throw new CliError(`--retain-jobs: ${(err as Error).message}`, 2);
  }
}

function workerCount(value: string | undefined): number {
  const count = Number(value ?? process.env.SVC_WORKERS ?? 1);
  if (!Number.isInteger(count) || count < 0 || count > 64) throw new CliError("--workers must be an integer from 0 to 64", 2);
  return count;
}

async function serve(options: { dataDir: string; port: number; edgePort: number; logger: boolean; workers: number; retainJobsMs?: number }): Promise<number> {
  // Signal handlers go in before anything is printed: a parent that reads the ready line and
  // sends SIGTERM at once must get a graceful shutdown, not the default kill.
  let stopRequested!: () => void;
  const stopSignal = new Promise<void>((resolve) => (stopRequested = resolve));
  const onSignal = () => stopRequested();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // Node's default ends the process on an unhandled rejection: one failed database call in a
  // background task must cost that task, not every job, stream and deployment the daemon serves.
  process.on("unhandledRejection", (reason) => {
    process.stderr.write(`svc cloud: unhandled error (still serving): ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`);
  });
  let cloud: RunningCloud;
  try {
    cloud = await startCloud({
      ...options,
      databaseUrl: process.env.SVC_DATABASE_URL || undefined,
      deployDomain: process.env.SVC_DEPLOY_DOMAIN || undefined,
      datasetBytes: process.env.SVC_MAX_DATASET_BYTES ? Number(process.env.SVC_MAX_DATASET_BYTES) : undefined,
      artifactBytes: process.env.SVC_MAX_ARTIFACT_BYTES ? Number(process.env.SVC_MAX_ARTIFACT_BYTES) : undefined,
    });
  } catch (err) {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (err instanceof DataDirLockedError) throw new CliError(err.message);
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new CliError(`${(err as Error).message}: the port is taken; pass --port/--edge-port (0 picks free ports)`);
    }
    throw err;
  }
  const workers = startLocalWorkers({
    count: options.workers,
    cloudUrl: cloud.cloudUrl,
    token: cloud.workerToken,
    dataDir: options.dataDir,
    log: (line) => process.stderr.write(`svc cloud: ${line}\n`),
  });
  process.stdout.write(JSON.stringify({ cloudUrl: cloud.cloudUrl, edgeUrl: cloud.edgeUrl, deployDomain: cloud.deployDomain }) + "\n");
  void cloud.drainRequested.then(() => stopRequested());
  await stopSignal;
  await workers.stop();
  // A second Ctrl-C while draining falls back to the default: exit now.
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  await cloud.close();
  return 0;
}

async function stop(dataDir: string): Promise<number> {
  const file = await readDaemonFile(dataDir);
  if (!file || !isAlive(file.pid)) {
    process.stdout.write("svc cloud is not running\n");
    return 0;
  }
  // Asked over HTTP first: the way that works on Windows, where a signal would kill it without its cleanup.
  if (!(await requestDaemonDrain(file.cloudUrl, dataDir))) {
    if (process.platform === "win32")
      throw new CliError(`the daemon (pid ${file.pid}) did not answer the drain request at ${file.cloudUrl}; end it in Task Manager`);
    process.kill(file.pid, "SIGTERM");
  }
  const deadline = Date.now() + 15_000;
  while (isAlive(file.pid)) {
    if (Date.now() > deadline) throw new CliError(`the daemon (pid ${file.pid}) did not stop within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.stdout.write(`svc cloud stopped (pid ${file.pid})\n`);
  return 0;
}
