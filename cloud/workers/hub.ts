/**
 * Control-plane side of the worker link: authenticates workers, hands out queued jobs one at a
 * time, stores their events with acknowledgements, relays cancels, and fails jobs whose worker
 * vanished and did not come back within the grace period.
 *
 * Events are stored by group commit: the frames that arrive while one transaction runs are
 * stored together by the next, and each is acknowledged only after its transaction committed.
 *
 * Several instances on one PostgreSQL (see cloud/store/clusterSignals.ts): a worker may be linked
 * to any of them. A job queued or cancelled through one instance is signalled to all (the one that
 * holds the worker acts); each instance signals, on every hello and then every few seconds, which
 * jobs its links hold, and a claimed job that no instance has held for the grace period is failed
 * by whichever instance notices first (the job's state machine lets only one failure in). That
 * lease also covers an instance killed outright, and a restart, without a timer per job.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { CloudContext } from "../context.js";
import { resolvePrincipal } from "../http/auth.js";
import { appendJobEvent, appendJobEvents, claimNextJob, isTerminal, releaseClaim, toJob, type AppendOutcome } from "../domain/jobs.js";
import { modelSha256 } from "../domain/models.js";
import { hfFolderManifest } from "../domain/hfFolderManifest.js";
import { pathOf } from "../../sdk/api/route.js";
import { workerFilesApi } from "../../sdk/api/workers.js";
import type { JobsTable } from "../store/schema.js";
import { JobEndedError } from "../domain/jobState.js";
import { OPTIONAL_FRAMES, parseWorkerFrame, type CloudMessage, type WorkerMessage } from "./protocol.js";
import { LeaseTracker, workerName } from "./leases.js";
import { WorkerRegistry } from "./workerRegistry.js";
import type { WorkerInfo, WorkerState } from "../../sdk/api/workers.js";

type EventFrame = Extract<WorkerMessage, { type: "event" }>;

/** Most events stored by one transaction: bounds how long it holds the store and the ack delay. */
const MAX_GROUP = 1000;

interface ConnectedWorker {
  socket: WebSocket;
  /**
   * Event frames received and not yet handed to a transaction. Events of one link are stored
   * strictly in arrival order (seq order), one group at a time.
   */
  queue: EventFrame[];
  /** A group is being stored; frames arriving meanwhile wait in `queue` for the next group. */
  storing: boolean;
  /**
   * Set when storing an event failed for a reason that is not the worker's (disk full, database
   * gone): the frames that follow on this link are ignored and the link is closed, so the worker
   * keeps them all and resends them in order after it reconnects, instead of having one dropped
   * and every later one refused as a gap.
   */
  broken: boolean;
  workerId: string;
  name: string;
  idle: boolean;
  jobs: Set<string>;
  /** Of `jobs`, those the worker said are trained and uploading (a `state` frame). */
  uploading: Set<string>;
  /** The jobs its hello held: the only ones a `state` frame may release (those assigned on this link end with their events). */
  heldAtHello: Set<string>;
  /** When this link's hello was recorded in the worker list: fences the list's writes for this link. */
  connectedAt: string;
  /** What the worker list last heard about this link, so unchanged states are not written again. */
  listed: string;
}

/** How long a job survives its worker's disconnect, waiting for the worker to reconnect. */
export const RECONNECT_GRACE_MS = Number(process.env.SVC_WORKER_GRACE_MS) || 10_000;

/** How often a job whose worker left before starting it goes back to the queue before it fails instead (a job that kills every worker must end). */
const MAX_ASSIGNMENTS = 5;

export class WorkerHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  private readonly workers = new Map<string, ConnectedWorker>();
  private readonly orphanTimers = new Map<string, NodeJS.Timeout>();
  /** The assignment pass in progress; a wake-up during it asks for one more pass (`assignAgain`). */
  private assignment: Promise<void> | null = null;
  private assignAgain = false;
  /** Set by close(): sockets closing during shutdown must not arm orphan timers on a closed store. */
  private closed = false;
  /** Shared database only: who holds which claimed job, across instances (replaces the orphan timers). */
  private readonly leases: LeaseTracker | undefined;
  /** The worker list, in the store so that every instance lists the workers of all. */
  private readonly registry: WorkerRegistry;

  constructor(private readonly ctx: CloudContext) {
    this.registry = new WorkerRegistry(ctx, () => [...this.workers.keys()]);
    this.registry.start();
    const cluster = ctx.cluster;
    if (!cluster?.shared) return;
    this.leases = new LeaseTracker(
      ctx,
      RECONNECT_GRACE_MS,
      () => this.heldJobs(),
      (jobId, workerName) => this.failOrphan(jobId, workerName),
    );
    cluster.on("queued", () => void this.jobQueued());
    cluster.on("cancel", (message) => void this.cancelLocally(String(message.jobId)));
    cluster.on("holding", (message) => this.leases?.heldElsewhere(Array.isArray(message.jobs) ? message.jobs.map(String) : []));
    cluster.onResync(() => void this.jobQueued());
  }

  /** Every job a worker linked to this instance holds. */
  private heldJobs(): string[] {
    return [...this.workers.values()].flatMap((worker) => [...worker.jobs]);
  }

  /** Hook for the HTTP server's `upgrade` event. */
  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    try {
      await this.upgrade(request, socket, head);
    } catch (err) {
      // One failed token lookup (a database error) must cost this connection, not the daemon.
      console.error(`svc cloud: worker connection failed: ${(err as Error).message}`);
      socket.destroy();
    }
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(request.url ?? "/", "http://x");
    if (url.pathname !== "/v1/workers/connect") return void socket.destroy();
    const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1];
    const principal = token ? await resolvePrincipal(this.ctx, token) : null;
    if (principal?.kind !== "worker") {
      socket.end("HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws));
  }

  /**
   * After a restart, jobs a worker had claimed get the same grace as after a dropped link: a worker
   * that comes back and reports them keeps them; the others are failed with a readable error.
   */
  async recoverClaimedJobs(): Promise<number> {
    if (this.leases) return this.leases.start(); // the lease sweep judges claimed jobs instead
    const claimed = await this.ctx.db
      .selectFrom("jobs")
      .select(["id", "worker_id"])
      .where("status", "in", ["queued", "running"])
      .where("worker_id", "is not", null)
      .execute();
    for (const job of claimed) this.startOrphanTimer(job.id, workerName(job.worker_id));
    return claimed.length;
  }

  /** The workers linked to every instance, and those gone within the hour (`GET /v1/workers`). */
  listWorkers(): Promise<WorkerInfo[]> {
    return this.registry.list();
  }

  connectedCount(): number {
    return this.workers.size;
  }

  /** Asks the worker holding the job to stop: here if its link is here, else through the other instances. */
  requestCancel(jobId: string): boolean {
    if (this.cancelLocally(jobId)) return true;
    void this.ctx.cluster?.signal("cancel", { jobId });
    return false;
  }

  private cancelLocally(jobId: string): boolean {
    for (const worker of this.workers.values()) {
      if (worker.jobs.has(jobId)) {
        send(worker.socket, { type: "cancel", jobId });
        return true;
      }
    }
    return false;
  }

  /** A job was created (or given back to the queue): wakes idle workers here and on every other instance. */
  jobCreated(): Promise<void> {
    void this.ctx.cluster?.signal("queued");
    return this.jobQueued();
  }

  /** Workers that said they are ready and hold no job (health and tests). */
  idleWorkerCount(): number {
    return [...this.workers.values()].filter((w) => w.idle).length;
  }

  /**
   * Wakes idle workers after a job was queued (or a worker became idle). A wake-up that arrives
   * while a pass runs is not dropped: that pass runs once more, since it may have looked for
   * queued jobs before this one was stored. Resolves after a pass that started after the call;
   * never rejects (errors are logged: the next wake-up retries).
   */
  jobQueued(): Promise<void> {
    if (this.assignment !== null) {
      this.assignAgain = true;
      return this.assignment;
    }
    const run = async () => {
      try {
        do {
          this.assignAgain = false;
          await this.assignQueuedJobs().catch((err) => console.error(`svc cloud: could not assign queued jobs: ${(err as Error).message}`));
        } while (this.assignAgain && !this.closed);
      } finally {
        // Cleared with no await after the last check, so no wake-up can slip in between.
        this.assignment = null;
      }
    };
    this.assignment = run();
    return this.assignment;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.leases?.stop();
    this.registry.stop();
    // Listed as gone now, while the store is still open: the links are closed below.
    for (const worker of this.workers.values()) this.registry.disconnected(worker.workerId, worker.connectedAt);
    await this.registry.settled();
    for (const timer of this.orphanTimers.values()) clearTimeout(timer);
    for (const worker of this.workers.values()) worker.socket.close(1001, "cloud shutting down");
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(socket: WebSocket): void {
    let worker: ConnectedWorker | null = null;
    socket.on("message", (raw) => {
      // A frame that is not what the protocol says costs its link, with the reason, never the cloud.
      const parsed = parseWorkerFrame(String(raw));
      if ("error" in parsed) return socket.close(1008, parsed.error);
      const { message } = parsed;
      if (message.type === "hello") {
        worker = {
          socket,
          queue: [],
          storing: false,
          broken: false,
          workerId: message.workerId,
          name: message.name,
          idle: false,
          jobs: new Set(message.holding),
          uploading: new Set(),
          heldAtHello: new Set(message.holding),
          connectedAt: "",
          listed: "",
        };
        this.workers.set(message.workerId, worker);
        worker.listed = listedState(worker);
        worker.connectedAt = this.registry.connected(
          {
            workerId: message.workerId,
            name: message.name,
            host: message.host ?? "",
            backends: message.backends ?? [],
            devices: message.devices ?? [],
            worldSize: message.worldSize ?? 1,
          },
          stateOf(worker),
          [...worker.jobs],
        );
        for (const jobId of message.holding) this.clearOrphanTimer(jobId);
        this.leases?.heldHere(message.holding);
        send(socket, { type: "welcome", frames: [...OPTIONAL_FRAMES] });
        return;
      }
      if (!worker) return socket.close(1008, "send hello first");
      if (message.type === "ready") {
        worker.idle = true;
        this.relist(worker);
        void this.jobQueued();
      } else if (message.type === "event") {
        if (worker.broken) return;
        worker.queue.push(message);
        if (!worker.storing) void this.storeEvents(worker);
      } else if (message.type === "state") {
        worker.uploading = new Set(message.uploading);
        for (const jobId of message.released ?? []) if (worker.heldAtHello.has(jobId)) worker.jobs.delete(jobId);
        this.relist(worker);
      } else if (message.type === "llama") {
        if (this.linked(worker)) this.registry.llamaDevice(worker.workerId, worker.connectedAt, message.device);
      }
    });
    socket.on("close", () => {
      if (!worker || this.workers.get(worker.workerId) !== worker) return;
      this.workers.delete(worker.workerId);
      if (!this.closed) this.registry.disconnected(worker.workerId, worker.connectedAt);
      if (this.leases) return; // the lease runs out unless another instance's link holds the job
      for (const jobId of worker.jobs) this.startOrphanTimer(jobId, worker.name);
    });
    socket.on("error", () => socket.terminate());
  }

  /** Stores the link's queued events group by group until the queue is empty or the link broke. */
  private async storeEvents(worker: ConnectedWorker): Promise<void> {
    worker.storing = true;
    try {
      while (worker.queue.length > 0 && !worker.broken) {
        const group = worker.queue.splice(0, MAX_GROUP);
        let outcomes: AppendOutcome[];
        try {
          outcomes = await appendJobEvents(
            this.ctx,
            group.map((frame) => ({
              jobId: frame.jobId,
              type: frame.eventType,
              data: frame.data,
              origin: { kind: "worker", claim: frame.claim, seq: frame.seq },
            })),
          );
        } catch (err) {
          // Not the worker's fault (disk full, database gone): nothing of the group was stored
          // or acknowledged; the worker resends it all, in order, after reconnecting.
          console.error(
            `svc cloud: could not store ${group.length} event(s) from worker ${worker.name}: ${(err as Error).message}; the worker will resend them`,
          );
          worker.broken = true;
          worker.queue = [];
          worker.socket.close(1011, "could not store an event; reconnect and resend");
          return;
        }
        this.answer(worker, group, outcomes);
      }
    } finally {
      worker.storing = false;
    }
  }

  /**
   * Answers a stored group in order. An ack covers its seq and every earlier one of the job
   * (protocol.ts), so a run of accepted events of one job gets one ack, for its last seq; a
   * refusal first flushes the job's pending ack, then says why (the worker stops an ended job).
   */
  private answer(worker: ConnectedWorker, group: EventFrame[], outcomes: AppendOutcome[]): void {
    const pendingAck = new Map<string, number>();
    const flush = (jobId: string) => {
      const seq = pendingAck.get(jobId);
      if (seq === undefined) return;
      pendingAck.delete(jobId);
      send(worker.socket, { type: "ack", jobId, seq });
    };
    group.forEach((frame, i) => {
      const { jobId, seq, eventType } = frame;
      const outcome = outcomes[i];
      if (outcome.kind === "refused") {
        flush(jobId);
        send(worker.socket, { type: "nack", jobId, seq, code: outcome.error.code, error: outcome.error.message });
        if (outcome.error.code === "job_ended" || outcome.error.code === "stale_claim") worker.jobs.delete(jobId);
        return;
      }
      // A resent duplicate below what the job already acknowledged keeps its own ack.
      if ((pendingAck.get(jobId) ?? 0) > seq) flush(jobId);
      pendingAck.set(jobId, seq);
      if (eventType === "training.completed" || eventType === "training.failed" || eventType === "training.cancelled") {
        worker.jobs.delete(jobId);
      }
    });
    for (const jobId of [...pendingAck.keys()]) flush(jobId);
    this.relist(worker);
  }

  /** Tells the worker list what the worker does now, when that changed. */
  private relist(worker: ConnectedWorker): void {
    const listed = listedState(worker);
    if (listed === worker.listed || this.closed || this.workers.get(worker.workerId) !== worker) return;
    worker.listed = listed;
    this.registry.changed(worker.workerId, worker.connectedAt, stateOf(worker), [...worker.jobs]);
  }

  /**
   * Pairs idle workers with queued jobs, oldest job first; one claim at a time (jobQueued runs it).
   * A claim and its send are one step: the link is checked again after the last await, just
   * before the send, and a claim whose link closed meanwhile (or whose send fails) goes back to
   * the queue at once, for the next idle worker here or anywhere.
   */
  private async assignQueuedJobs(): Promise<void> {
    for (const worker of this.workers.values()) {
      if (!worker.idle || !this.linked(worker)) continue;
      const job = await claimNextJob(this.ctx, worker.workerId);
      if (!job) break;
      worker.idle = false;
      let assignment: CloudMessage;
      try {
        assignment = await this.assignmentFor(job);
      } catch (err) {
        // Given back without a wake-up: the next one retries, instead of this pass spinning on the same failure.
        await this.requeue(job.id, job.claim, worker, "the assignment could not be prepared", false);
        throw err;
      }
      if (!this.linked(worker)) {
        await this.requeue(job.id, job.claim, worker, "its link closed before the assignment went out");
        continue;
      }
      worker.jobs.add(job.id);
      this.relist(worker);
      this.leases?.heldHere([job.id]);
      worker.socket.send(JSON.stringify(assignment), (err) => {
        if (!err) return;
        worker.jobs.delete(job.id);
        this.relist(worker);
        void this.requeue(job.id, job.claim, worker, `the assignment could not be sent (${err.message})`);
      });
    }
  }

  /** The link is this worker's current one, open, and the hub is not shutting down. */
  private linked(worker: ConnectedWorker): boolean {
    return !this.closed && this.workers.get(worker.workerId) === worker && worker.socket.readyState === worker.socket.OPEN;
  }

  private async assignmentFor(job: JobsTable): Promise<CloudMessage> {
    const base = this.ctx.cloudUrl;
    const modelName = String((JSON.parse(job.config) as { model?: unknown }).model ?? "");
    const model = await this.ctx.db.selectFrom("base_models").select(["name", "path", "sha256", "hf_folder"]).where("name", "=", modelName).executeTakeFirst();
    const sha256 = model ? await modelSha256(this.ctx, model) : null;
    const hfFiles = model?.hf_folder ? await hfFolderManifest(model.hf_folder) : null;
    return {
      type: "assign",
      job: toJob(job),
      claim: job.claim,
      datasetUrl: job.dataset_id ? `${base}/v1/worker/datasets/${job.dataset_id}` : null,
      evalDatasetUrl: job.eval_dataset_id ? `${base}/v1/worker/datasets/${job.eval_dataset_id}` : null,
      artifactUploadUrl: `${base}/v1/worker/jobs/${job.id}/artifacts?claim=${job.claim}`,
      model: {
        name: modelName,
        path: model?.path ?? null,
        sha256,
        url: `${base}${pathOf(workerFilesApi.downloadBaseModel.path, { name: modelName })}`,
        hfFolder: model?.hf_folder ?? null,
        hfFiles: hfFiles && { url: `${base}${pathOf(workerFilesApi.downloadHfModelFile.path, { name: modelName, file: "" })}`, files: hfFiles },
      },
    };
  }

  /** Puts a claim that never reached its worker back in the queue, and (`wake`) wakes idle workers here and on every other instance. */
  private async requeue(jobId: string, claim: number, worker: ConnectedWorker, why: string, wake = true): Promise<void> {
    // Never rejects: a store that fails here leaves the claim to the orphan grace (the lease sweep on
    // a shared database), which gives it back the same way.
    const released = await releaseClaim(this.ctx, jobId, claim).catch((err) => {
      console.error(`svc cloud: could not give job ${jobId} back to the queue (${why}): ${(err as Error).message}`);
      if (!this.leases) this.startOrphanTimer(jobId, worker.name);
      return false;
    });
    if (!released) return;
    console.error(`svc cloud: job ${jobId} goes back to the queue: worker ${worker.name}: ${why}`);
    if (wake) void this.jobCreated();
  }

  private startOrphanTimer(jobId: string, workerName: string): void {
    this.clearOrphanTimer(jobId);
    if (this.closed) return; // the next cloud start sees the job still running and its worker gone
    const timer = setTimeout(() => {
      this.failOrphan(jobId, workerName).catch((err) => console.error(`svc cloud: could not fail orphaned job ${jobId}: ${(err as Error).message}`));
    }, RECONNECT_GRACE_MS);
    timer.unref();
    this.orphanTimers.set(jobId, timer);
  }

  private clearOrphanTimer(jobId: string): void {
    const timer = this.orphanTimers.get(jobId);
    if (timer) clearTimeout(timer);
    this.orphanTimers.delete(jobId);
  }

  /**
   * The job's worker is gone and did not come back within the grace period. A job it never
   * started (still queued: the assignment may never have arrived) goes back to the queue, up to
   * MAX_ASSIGNMENTS times; a running one, or one no worker ever started, fails with a readable error.
   */
  private async failOrphan(jobId: string, workerName: string): Promise<void> {
    this.orphanTimers.delete(jobId);
    const job = await this.ctx.db.selectFrom("jobs").select(["status", "claim", "worker_id"]).where("id", "=", jobId).executeTakeFirst();
    if (!job || isTerminal(job.status)) return;
    let error = `The worker "${workerName}" running this job stopped unexpectedly and did not reconnect within ${RECONNECT_GRACE_MS / 1000} s.`;
    if (job.status === "queued") {
      if (job.worker_id === null) return; // back in the queue already
      // Each release moves the fencing number on as well: the n-th assignment has claim 2n - 1.
      const assignments = (Number(job.claim) + 1) / 2;
      if (assignments < MAX_ASSIGNMENTS) {
        if (await releaseClaim(this.ctx, jobId, Number(job.claim))) {
          console.error(`svc cloud: job ${jobId} goes back to the queue: its worker ${workerName} left before starting it`);
          void this.jobCreated();
        }
        return; // not released: it started or was claimed again meanwhile, so it is not orphaned
      }
      error = `No worker started this job in ${MAX_ASSIGNMENTS} assignments; the last, "${workerName}", stopped before it started.`;
    }
    await appendJobEvent(this.ctx, jobId, "training.failed", { error }).catch((err) => {
      if (!(err instanceof JobEndedError)) throw err; // it ended meanwhile (say, cancelled): nothing to fail
    });
  }
}

/**
 * A worker holding a job it did not say is uploading trains; one whose every job is uploading uploads; one that said
 * ready waits; else it is still starting.
 */
function stateOf(worker: ConnectedWorker): WorkerState {
  if ([...worker.jobs].some((jobId) => !worker.uploading.has(jobId))) return "training";
  if (worker.jobs.size > 0) return "uploading";
  return worker.idle ? "idle" : "starting";
}

function listedState(worker: ConnectedWorker): string {
  return `${stateOf(worker)} ${[...worker.jobs].join(",")}`;
}

function send(socket: WebSocket, message: CloudMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}
