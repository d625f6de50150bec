/**
 * A worker-protocol client for tests: speaks the real WebSocket protocol of cloud/workers to a
 * real cloud, so tests can append job events exactly as a training worker does.
 */
import WebSocket from "ws";
import type { CloudMessage, WorkerMessage } from "../../cloud/workers/protocol.js";
import type { CreateJobInput } from "../../sdk/api/jobs.js";
import type { CloudClient } from "../../sdk/client.js";
import type { Job } from "../../sdk/wire.js";
import { workerToken, type TestCloud } from "./cloud.js";

export type Assign = Extract<CloudMessage, { type: "assign" }>;

export class TestWorker {
  readonly messages: CloudMessage[] = [];
  /** Each assigned job's claim (fencing number), kept apart from `messages`, which tests clear. */
  private readonly claims = new Map<string, number>();
  private waiters: { match: (m: CloudMessage) => boolean; resolve: (m: CloudMessage) => void }[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as CloudMessage;
      if (message.type === "assign") this.claims.set(message.job.id, message.claim);
      this.messages.push(message);
      this.waiters = this.waiters.filter((w) => (w.match(message) ? (w.resolve(message), false) : true));
    });
  }

  static async connect(cloud: TestCloud, name = "test-worker", holding: string[] = []): Promise<TestWorker> {
    const socket = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${workerToken(cloud)}` } });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
      socket.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    });
    const worker = new TestWorker(socket);
    worker.send({ type: "hello", workerId: name, name, holding });
    return worker;
  }

  /**
   * Sends a frame as written; an event frame without a claim gets the claim of its job's
   * assignment, as the real worker link does (tests of fencing send their own).
   */
  send(message: WorkerMessage | (Omit<Extract<WorkerMessage, { type: "event" }>, "claim"> & { claim?: number })): void {
    if (message.type === "event" && message.claim === undefined) {
      message = { ...message, claim: this.claims.get(message.jobId) ?? 0 };
    }
    this.socket.send(JSON.stringify(message));
  }

  /** Resolves with the first message (already received or future) that matches. */
  next<T extends CloudMessage>(match: (m: CloudMessage) => m is T, timeoutMs = 10_000): Promise<T> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen as T);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a cloud message")), timeoutMs);
      this.waiters.push({
        match,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m as T);
        },
      });
    });
  }

  /**
   * Sends one event and waits for its answer: its nack, or an ack of its seq or a later one (an
   * ack covers every earlier seq of the job, and the cloud answers a stored group with one ack).
   */
  async emit(jobId: string, seq: number, eventType: Extract<WorkerMessage, { type: "event" }>["eventType"], data: Record<string, unknown>, claim?: number) {
    this.send({ type: "event", jobId, seq, eventType, data, claim });
    return this.next(
      (m): m is Extract<CloudMessage, { type: "ack" | "nack" }> =>
        (m.type === "ack" && m.jobId === jobId && m.seq >= seq) || (m.type === "nack" && m.jobId === jobId && m.seq === seq),
    );
  }

  close(): void {
    this.socket.close();
  }
}

export interface AssignedJob {
  job: Job;
  /** The test worker `w-<job name>` the job was assigned to; the caller closes it. */
  worker: TestWorker;
  assign: Assign;
}

/**
 * A new job of `client`'s project (`{ maxSteps: 1 }` unless the request says otherwise), handed
 * to a new test worker; with `started`, the worker's `training.started` (seq 1) is acked too.
 */
export async function assignedJob(
  cloud: TestCloud,
  client: CloudClient,
  request: Partial<CreateJobInput> & { name: string },
  options: { started?: boolean } = {},
): Promise<AssignedJob> {
  const job = await client.createJob({ config: { maxSteps: 1 }, ...request });
  const worker = await TestWorker.connect(cloud, `w-${request.name}`);
  worker.send({ type: "ready" });
  const assign = await worker.next((m): m is Assign => m.type === "assign" && m.job.id === job.id);
  if (options.started) {
    const answer = await worker.emit(job.id, 1, "training.started", {});
    if (answer.type !== "ack") throw new Error(`training.started of ${job.id} was refused: ${JSON.stringify(answer)}`);
  }
  return { job, worker, assign };
}

/** PUTs an artifact's bytes to the assignment's upload URL as a worker does, with `query` (name, kind, step, sha256, offset; claim: the assignment's unless given). */
export function uploadArtifact(cloud: TestCloud, assign: Assign, query: Record<string, string>, body: Uint8Array): Promise<Response> {
  const url = new URL(assign.artifactUploadUrl);
  for (const [key, value] of Object.entries({ claim: String(assign.claim), ...query })) url.searchParams.set(key, value);
  return fetch(url, {
    method: "PUT",
    headers: { authorization: `Bearer ${workerToken(cloud)}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(body),
  });
}
