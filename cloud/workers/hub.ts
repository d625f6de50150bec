/**
 * Control-plane side of the worker link: authenticates workers, hands out queued jobs one at a
 * time, stores their events with acknowledgements, relays cancels, and fails jobs whose worker
 * vanished and did not come back within the grace period.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { CloudContext } from "../context.js";
import { resolvePrincipal } from "../http/auth.js";
import { HttpError } from "../http/errors.js";
import { appendJobEvent, isTerminal, toJob } from "../domain/jobs.js";
import type { CloudMessage, WorkerMessage } from "./protocol.js";

interface ConnectedWorker {
  socket: WebSocket;
  /** Events of one link are stored strictly in arrival order (seq order), one at a time. */
  storing: Promise<void>;
  workerId: string;
  name: string;
  idle: boolean;
  jobs: Set<string>;
}

/** How long a job survives its worker's disconnect, waiting for the worker to reconnect. */
export const RECONNECT_GRACE_MS = Number(process.env.SVC_WORKER_GRACE_MS) || 10_000;

export class WorkerHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  private readonly workers = new Map<string, ConnectedWorker>();
  private readonly orphanTimers = new Map<string, NodeJS.Timeout>();
  private assigning = false;
  /** Set by close(): sockets closing during shutdown must not arm orphan timers on a closed store. */
  private closed = false;

  constructor(private readonly ctx: CloudContext) {}

  /** Hook for the HTTP server's `upgrade` event. */
  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
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
    const claimed = await this.ctx.db
      .selectFrom("jobs")
      .select(["id", "worker_id"])
      .where("status", "in", ["queued", "running"])
      .where("worker_id", "is not", null)
      .execute();
    for (const job of claimed) this.startOrphanTimer(job.id, String(job.worker_id).replace(/-[0-9a-f]{8}$/, ""));
    return claimed.length;
  }

  connectedCount(): number {
    return this.workers.size;
  }

  requestCancel(jobId: string): boolean {
    for (const worker of this.workers.values()) {
      if (worker.jobs.has(jobId)) {
        send(worker.socket, { type: "cancel", jobId });
        return true;
      }
    }
    return false;
  }

  jobQueued(): void {
    void this.assignQueuedJobs();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.orphanTimers.values()) clearTimeout(timer);
    for (const worker of this.workers.values()) worker.socket.close(1001, "cloud shutting down");
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(socket: WebSocket): void {
    let worker: ConnectedWorker | null = null;
    socket.on("message", (raw) => {
      let message: WorkerMessage;
      try {
        message = JSON.parse(String(raw));
      } catch {
        return socket.close(1003, "frames must be JSON");
      }
      if (message.type === "hello") {
        worker = { socket, storing: Promise.resolve(), workerId: message.workerId, name: message.name, idle: false, jobs: new Set(message.holding) };
        this.workers.set(message.workerId, worker);
        for (const jobId of message.holding) this.clearOrphanTimer(jobId);
        return;
      }
      if (!worker) return socket.close(1008, "send hello first");
      if (message.type === "ready") {
        worker.idle = true;
        void this.assignQueuedJobs();
      } else if (message.type === "event") {
        const current = worker;
        current.storing = current.storing.then(() => this.storeEvent(current, message));
      }
    });
    socket.on("close", () => {
      if (!worker || this.workers.get(worker.workerId) !== worker) return;
      this.workers.delete(worker.workerId);
      for (const jobId of worker.jobs) this.startOrphanTimer(jobId, worker.name);
    });
    socket.on("error", () => socket.terminate());
  }

  private async storeEvent(worker: ConnectedWorker, message: Extract<WorkerMessage, { type: "event" }>): Promise<void> {
    const { jobId, seq, eventType, data } = message;
    try {
      await appendJobEvent(this.ctx, jobId, eventType, data, seq);
      send(worker.socket, { type: "ack", jobId, seq });
      if (eventType === "training.completed" || eventType === "training.failed" || eventType === "training.cancelled") {
        worker.jobs.delete(jobId);
      }
    } catch (err) {
      const error = err instanceof HttpError ? err.message : "could not store the event";
      send(worker.socket, { type: "nack", jobId, seq, error });
    }
  }

  /** Pairs idle workers with queued jobs, oldest job first; one claim at a time. */
  private async assignQueuedJobs(): Promise<void> {
    if (this.assigning) return;
    this.assigning = true;
    try {
      for (const worker of this.workers.values()) {
        if (!worker.idle || worker.socket.readyState !== worker.socket.OPEN) continue;
        const job = await this.claimNextJob(worker.workerId);
        if (!job) break;
        worker.idle = false;
        worker.jobs.add(job.id);
        const base = this.ctx.cloudUrl;
        const modelName = String((JSON.parse(job.config) as { model?: unknown }).model ?? "");
        const model = await this.ctx.db.selectFrom("base_models").select(["name", "path"]).where("name", "=", modelName).executeTakeFirst();
        send(worker.socket, {
          type: "assign",
          job: toJob(job),
          datasetUrl: job.dataset_id ? `${base}/v1/worker/datasets/${job.dataset_id}` : null,
          evalDatasetUrl: job.eval_dataset_id ? `${base}/v1/worker/datasets/${job.eval_dataset_id}` : null,
          artifactUploadUrl: `${base}/v1/worker/jobs/${job.id}/artifacts`,
          model: { name: modelName, path: model?.path ?? null, url: `${base}/v1/worker/models/${encodeURIComponent(modelName)}` },
        });
      }
    } finally {
      this.assigning = false;
    }
  }

  private async claimNextJob(workerId: string) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const candidate = await this.ctx.db
        .selectFrom("jobs")
        .selectAll()
        .where("status", "=", "queued")
        .where("worker_id", "is", null)
        .orderBy("created_at")
        .limit(1)
        .executeTakeFirst();
      if (!candidate) return null;
      // Conditional update: with several cloud instances on PostgreSQL only one claim wins.
      const claimed = await this.ctx.db
        .updateTable("jobs")
        .set({ worker_id: workerId })
        .where("id", "=", candidate.id)
        .where("worker_id", "is", null)
        .where("status", "=", "queued")
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 1) return { ...candidate, worker_id: workerId };
    }
    return null;
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

  private async failOrphan(jobId: string, workerName: string): Promise<void> {
    this.orphanTimers.delete(jobId);
    const job = await this.ctx.db.selectFrom("jobs").select("status").where("id", "=", jobId).executeTakeFirst();
    if (!job || isTerminal(job.status)) return;
    await appendJobEvent(this.ctx, jobId, "training.failed", {
      error: `The worker "${workerName}" running this job stopped unexpectedly and did not reconnect within ${RECONNECT_GRACE_MS / 1000} s.`,
    });
  }
}

function send(socket: WebSocket, message: CloudMessage): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}
