/**
 * Runs one cloud process: lock the data dir (SQLite), open and migrate the store, listen on the
 * control plane and edge ports, write daemon.json, and shut down gracefully (stop accepting,
 * drain, close the store, release the lock). On PostgreSQL many instances may share the database
 * and the data dir (its files: datasets, artifacts, tokens), so there is no lock; they keep each
 * other current through cluster signals (cloud/store/clusterSignals.ts).
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { buildControlPlane, buildEdge } from "./app.js";
import { registerBuiltinModels } from "./builtinModels.js";
import type { CloudContext } from "./context.js";
import { JobEventBus } from "./domain/eventBus.js";
import { JobListChanges } from "./domain/jobListChanges.js";
import { newId, nowIso, randomToken, sha256Hex } from "./domain/ids.js";
import { acquireDataDirLock } from "./lock.js";
import { createMetrics } from "./metrics.js";
import { openStore } from "./store/db.js";
import { localOnlySignals, postgresSignals } from "./store/clusterSignals.js";
import { WorkerHub } from "./workers/hub.js";
import { mountOAuth } from "./oauth/index.js";
import { mountEdge } from "./edge/index.js";
import { DeploymentChangeNotifier } from "./edge/changeNotifier.js";
import { OpenStreams } from "./http/openStreams.js";
import { startInferenceService, type InferenceService } from "./inference/index.js";
import { writeFileAtomic } from "../sdk/files.js";
import { drainTokenFile } from "../sdk/platform/daemonDrain.js";
import { probeDataDir, StorageHealth } from "./http/storageHealth.js";
import { startJobRetention } from "./domain/jobRetention.js";

export interface CloudOptions {
  dataDir: string;
  port: number;
  edgePort: number;
  host?: string;
  databaseUrl?: string;
  /** Domain deployments answer under; default `localhost:<edge port>`. */
  deployDomain?: string;
  logger?: boolean;
  datasetBytes?: number;
  /** Largest artifact a worker may upload (default 512 MiB). */
  artifactBytes?: number;
  /** Finished jobs older than this many milliseconds are deleted (cloud/domain/jobRetention.ts); unset keeps them. */
  retainJobsMs?: number;
}

export interface DaemonInfo {
  cloudUrl: string;
  edgeUrl: string;
  deployDomain: string;
}

export interface RunningCloud extends DaemonInfo {
  ctx: CloudContext;
  inference: InferenceService;
  hub: WorkerHub;
  /** Token local worker processes authenticate with. */
  workerToken: string;
  /** Resolves when `svc cloud stop` asks over HTTP (`POST /drainz`, sdk/platform/daemonDrain.ts). */
  drainRequested: Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_DATASET_BYTES = 50 * 1024 * 1024;

export async function startCloud(options: CloudOptions): Promise<RunningCloud> {
  const host = options.host ?? "127.0.0.1";
  await fs.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const releaseLock = options.databaseUrl ? async () => undefined : await acquireDataDirLock(options.dataDir);
  const store = await openStore({ dataDir: options.dataDir, databaseUrl: options.databaseUrl }).catch(async (err) => {
    await releaseLock();
    throw err;
  });
  const log = (line: string) => process.stderr.write(`svc cloud: ${line}\n`);
  const cluster = options.databaseUrl
    ? await postgresSignals(options.databaseUrl, store.db, log).catch(async (err) => {
        await store.close();
        await releaseLock();
        throw err;
      })
    : localOnlySignals();
  let ready = false;
  const ctx: CloudContext = {
    db: store.db,
    dialect: store.dialect,
    dataDir: options.dataDir,
    cloudUrl: "",
    edgeUrl: "",
    deployDomain: "",
    events: new JobEventBus(cluster),
    jobListChanges: new JobListChanges(cluster),
    metrics: createMetrics(),
    tokenResolvers: [],
    limits: { datasetBytes: options.datasetBytes ?? DEFAULT_DATASET_BYTES, artifactBytes: options.artifactBytes ?? 512 * 1024 * 1024 },
    deploymentChanges: new DeploymentChangeNotifier(cluster),
    openStreams: new OpenStreams(),
    storage: new StorageHealth(
      options.dataDir,
      (line) => process.stderr.write(`${line}\n`),
      async () => {
        await probeDataDir(options.dataDir);
        const at = nowIso();
        await store.db
          .insertInto("write_probe")
          .values({ id: 1, at })
          .onConflict((oc) => oc.column("id").doUpdateSet({ at }))
          .execute();
      },
    ),
    cluster,
  };
  const hub = new WorkerHub(ctx);
  const inference = await startInferenceService(ctx);
  // A new drain token each start, written before the port opens, so only this daemon's owner can stop it over HTTP.
  let onDrain!: () => void;
  const drainRequested = new Promise<void>((resolve) => (onDrain = resolve));
  const drainToken = randomToken("svc_drain_");
  await writeFileAtomic(drainTokenFile(options.dataDir), drainToken + "\n");
  const control = buildControlPlane(ctx, hub, { logger: options.logger ?? false, isReady: () => ready, inference, drain: { token: drainToken, onDrain } });
  ctx.tokenResolvers.push(await mountOAuth(control, ctx));
  const edge = buildEdge(ctx, { logger: options.logger ?? false });
  const edgeRoutes = await mountEdge(edge, ctx, inference);
  try {
    await control.listen({ port: options.port, host });
    await edge.listen({ port: options.edgePort, host });
  } catch (err) {
    await Promise.allSettled([control.close(), edge.close(), edgeRoutes.close(), inference.close()]);
    await cluster.close();
    await store.close();
    await releaseLock();
    throw err;
  }
  // handleUpgrade catches its own errors; the catch here is the backstop that keeps the daemon up.
  control.server.on("upgrade", (request, socket, head) => {
    hub.handleUpgrade(request, socket, head).catch(() => socket.destroy());
  });
  const controlPort = (control.server.address() as AddressInfo).port;
  const edgePort = (edge.server.address() as AddressInfo).port;
  ctx.cloudUrl = `http://${host}:${controlPort}`;
  ctx.edgeUrl = `http://${host}:${edgePort}`;
  ctx.deployDomain = options.deployDomain ?? `localhost:${edgePort}`;
  await registerBuiltinModels(ctx);
  await hub.recoverClaimedJobs();
  const workerToken = await ensureWorkerToken(ctx);
  const info: DaemonInfo = { cloudUrl: ctx.cloudUrl, edgeUrl: ctx.edgeUrl, deployDomain: ctx.deployDomain };
  await writeFileAtomic(path.join(options.dataDir, "daemon.json"), JSON.stringify({ ...info, pid: process.pid, startedAt: nowIso() }, null, 2) + "\n");
  const retention = options.retainJobsMs ? startJobRetention(ctx, options.retainJobsMs, log) : null;
  ready = true;

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      ready = false;
      await retention?.stop();
      await hub.close();
      // close() stops accepting and waits for in-flight requests; an event stream never finishes
      // by itself, so end them all first.
      ctx.openStreams.closeAll();
      control.server.closeIdleConnections?.();
      await Promise.allSettled([control.close(), edge.close()]);
      await Promise.allSettled([edgeRoutes.close(), inference.close()]);
      await cluster.close();
      await store.close();
      await removeOwnDaemonFile(options.dataDir);
      await releaseLock();
    })());
  return { ...info, ctx, hub, inference, workerToken, drainRequested, close };
}

/** Another instance sharing the data dir (PostgreSQL) may have written daemon.json since: keep theirs. */
async function removeOwnDaemonFile(dataDir: string): Promise<void> {
  const file = path.join(dataDir, "daemon.json");
  const pid = (JSON.parse(await fs.readFile(file, "utf8").catch(() => "{}")) as { pid?: number }).pid;
  if (pid === undefined || pid === process.pid) await fs.rm(file, { force: true });
}

/** The local workers' token lives in the data dir (0600), so a restarted cloud keeps its workers. */
async function ensureWorkerToken(ctx: CloudContext): Promise<string> {
  const file = path.join(ctx.dataDir, "worker-token");
  const existing = (await fs.readFile(file, "utf8").catch(() => "")).trim();
  if (existing) {
    const row = await ctx.db.selectFrom("tokens").select("id").where("token_hash", "=", sha256Hex(existing)).executeTakeFirst();
    if (row) return existing;
  }
  const token = randomToken("svc_worker_");
  await ctx.db
    .insertInto("tokens")
    .values({ id: newId(), user_id: null, token_hash: sha256Hex(token), kind: "worker", created_at: nowIso() })
    .execute();
  await writeFileAtomic(file, token + "\n");
  return token;
}
