/**
 * Worker side of the worker link: a WebSocket to the control plane that reconnects with backoff,
 * numbers each job's events, keeps them until acknowledged and resends the unacknowledged ones
 * after a reconnect (the cloud stores each seq once).
 *
 * What the worker list shows beyond hello (llama.cpp's device, the jobs being uploaded) is kept here and sent again
 * on each link whose hub welcomed those frames.
 *
 * Exactly one reconnect loop runs at a time (`connecting`): a failed attempt fires both `error`
 * and `close`, and when each of those started a loop of its own the loops multiplied into
 * thousands of attempts a second.
 */
import WebSocket from "ws";
import { reconnectDelayMs } from "./backoff.js";
import type { JobEventType } from "../../sdk/wire.js";
import type { CloudMessage, WorkerMessage } from "./protocol.js";
import type { HelloFacts } from "./workerFacts.js";
import type { WorkerLlamaDevice } from "../../sdk/api/workers.js";

type EventFrame = Extract<WorkerMessage, { type: "event" }>;

export interface LinkOptions {
  cloudUrl: string;
  token: string;
  workerId: string;
  name: string;
  onMessage: (message: CloudMessage) => void;
  /** Job ids this worker still runs, reported in hello after a reconnect. */
  holding: () => string[];
  /** Its machine, backends, devices and ranks, for the cloud's worker list. */
  facts?: HelloFacts;
  log?: (line: string) => void;
}

export class WorkerLink {
  private socket: WebSocket | null = null;
  private readonly outbox = new Map<string, EventFrame[]>();
  private readonly nextSeq = new Map<string, number>();
  /** Each job's fencing number, from its assignment; sent with every event of the job. */
  private readonly claims = new Map<string, number>();
  private readonly ackWaiters = new Map<string, { seq: number; resolve: () => void }[]>();
  /** Jobs that ended here while events were still unacknowledged: dropped once the cloud answered them all. */
  private readonly finished = new Set<string>();
  private closed = false;
  private wantsWork = false;
  /** The optional frames the hub of the open link named in its welcome; none until it did. */
  private welcomed = new Set<string>();
  private llama: WorkerLlamaDevice | null = null;
  /** Held jobs that are trained and whose adapters are being delivered. */
  private readonly uploadingJobs = new Set<string>();
  /** Jobs this link's hello held that were completed over HTTP, not yet told to its hub. */
  private released = new Set<string>();
  /** The one reconnect loop in progress, if any; every caller of connect() shares it. */
  private connecting: Promise<void> | null = null;
  /**
   * Open links that dropped with events unacknowledged, since the cloud last acknowledged one. The
   * first drop reconnects at once (a restarted cloud resumes quickly); repeated drops without
   * progress (the cloud drops the link each time it cannot store the resent events, say with its
   * disk full) back off too.
   */
  private dropsWithoutProgress = 0;
  /** Wakes the loop's backoff wait early when the link is closed. */
  private wakeBackoff: (() => void) | null = null;

  constructor(private readonly options: LinkOptions) {}

  /** Opens the link, retrying with jittered exponential backoff until it is open or closed. */
  connect(): Promise<void> {
    this.connecting ??= this.reconnectLoop().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async reconnectLoop(): Promise<void> {
    const skipped = Math.max(0, this.dropsWithoutProgress - 1);
    if (skipped > 0) await this.backoff(reconnectDelayMs(skipped - 1));
    for (let attempt = skipped; !this.closed; attempt++) {
      try {
        await this.open();
        return;
      } catch (err) {
        if (this.closed) return;
        const delay = reconnectDelayMs(attempt);
        this.options.log?.(`worker link: ${(err as Error).message}; retrying in ${delay} ms`);
        await this.backoff(delay);
      }
    }
  }

  private async backoff(delay: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      this.wakeBackoff = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeBackoff = null;
  }

  /** Tells the cloud this worker is idle (remembered across reconnects). */
  ready(): void {
    this.wantsWork = true;
    this.send({ type: "ready" });
  }

  busy(): void {
    this.wantsWork = false;
  }

  /** Tells the cloud what this worker's llama.cpp runs on (remembered across reconnects). */
  llamaDevice(device: WorkerLlamaDevice): void {
    this.llama = device;
    this.sendOptional({ type: "llama", device });
  }

  /** Tells the cloud the job is trained and its adapter uploading (`true`), or no longer (remembered across reconnects). */
  uploading(jobId: string, uploading: boolean): void {
    if (uploading === this.uploadingJobs.has(jobId)) return;
    if (uploading) this.uploadingJobs.add(jobId);
    else this.uploadingJobs.delete(jobId);
    this.sendState();
  }

  /**
   * A job the hello held (an adapter an earlier run of this worker left) is delivered and completed over HTTP: the
   * cloud lists it no more. Call it after `holding` stopped naming the job, so a later hello does not hold it.
   */
  delivered(jobId: string): void {
    this.uploadingJobs.delete(jobId);
    this.released.add(jobId);
    this.sendState();
  }

  /** Queues one event of a job; resolves when the cloud has stored it. */
  emit(jobId: string, eventType: JobEventType, data: Record<string, unknown>): Promise<void> {
    const seq = (this.nextSeq.get(jobId) ?? 0) + 1;
    this.nextSeq.set(jobId, seq);
    const frame: EventFrame = { type: "event", jobId, claim: this.claims.get(jobId) ?? 0, seq, eventType, data };
    const pending = this.outbox.get(jobId) ?? [];
    pending.push(frame);
    this.outbox.set(jobId, pending);
    this.send(frame);
    return new Promise((resolve) => {
      const waiters = this.ackWaiters.get(jobId) ?? [];
      waiters.push({ seq, resolve });
      this.ackWaiters.set(jobId, waiters);
    });
  }

  /**
   * Forgets a finished job: now if the cloud has answered all its events, else as soon as it has
   * (a long-lived worker must not keep something for every job it ever ran).
   */
  forget(jobId: string): void {
    // The hub drops the job with its last event: no state frame is needed for it.
    this.uploadingJobs.delete(jobId);
    this.finished.add(jobId);
    this.dropIfAnswered(jobId);
  }

  /** Jobs the link still keeps anything for (counters, unacknowledged events, waiters). */
  trackedJobs(): number {
    return new Set([...this.outbox.keys(), ...this.nextSeq.keys(), ...this.claims.keys(), ...this.ackWaiters.keys()]).size;
  }

  private dropIfAnswered(jobId: string): void {
    if (!this.finished.has(jobId) || (this.outbox.get(jobId) ?? []).length > 0) return;
    this.outbox.delete(jobId);
    this.nextSeq.delete(jobId);
    this.claims.delete(jobId);
    this.ackWaiters.delete(jobId);
    this.finished.delete(jobId);
  }

  close(): void {
    this.closed = true;
    this.wakeBackoff?.();
    this.socket?.close();
  }

  /**
   * One connection attempt. Settles once: resolves when open, rejects when the attempt fails (the
   * reconnect loop then waits and retries). Only a socket that was open starts a new loop when it
   * closes; a failed attempt's `close` is ignored, its loop is already running.
   */
  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const url = `${this.options.cloudUrl.replace(/^http/, "ws")}/v1/workers/connect`;
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.options.token}` } });
      let opened = false;
      socket.once("unexpected-response", (_req, res) => {
        reject(new Error(`the cloud refused the worker (HTTP ${res.statusCode})`));
        socket.terminate();
      });
      // Errors after the open are followed by `close`, which reconnects; before it they fail the attempt.
      socket.on("error", (err) => reject(err));
      socket.once("open", () => {
        opened = true;
        this.socket = socket;
        this.welcomed = new Set();
        // This hello holds none of them: nothing is left to release on this link.
        this.released = new Set();
        this.sendNow(socket, {
          type: "hello",
          workerId: this.options.workerId,
          name: this.options.name,
          holding: this.options.holding(),
          ...this.options.facts,
        });
        // Resend everything not yet acknowledged, in order; duplicates are acked, not stored twice.
        for (const frames of this.outbox.values()) for (const frame of frames) this.sendNow(socket, frame);
        if (this.wantsWork) this.sendNow(socket, { type: "ready" });
        resolve();
      });
      socket.on("message", (raw) => this.receive(JSON.parse(String(raw)) as CloudMessage));
      socket.on("close", () => {
        if (this.socket === socket) this.socket = null;
        if (!opened) return reject(new Error("the connection closed before it opened"));
        // Only a drop with events still unacknowledged counts: an idle link may drop and come back freely.
        const unacknowledged = [...this.outbox.values()].some((frames) => frames.length > 0);
        this.dropsWithoutProgress = unacknowledged ? this.dropsWithoutProgress + 1 : 0;
        if (!this.closed) void this.connect();
      });
    });
  }

  private receive(message: CloudMessage): void {
    if (message.type === "welcome") return this.welcome(message.frames);
    if (message.type === "ack" || message.type === "nack") {
      if (message.type === "ack") this.dropsWithoutProgress = 0;
      const frames = this.outbox.get(message.jobId) ?? [];
      this.outbox.set(
        message.jobId,
        frames.filter((f) => f.seq > message.seq),
      );
      const waiters = this.ackWaiters.get(message.jobId) ?? [];
      for (const w of waiters) if (w.seq <= message.seq) w.resolve();
      this.ackWaiters.set(
        message.jobId,
        waiters.filter((w) => w.seq > message.seq),
      );
      this.dropIfAnswered(message.jobId);
      if (message.type === "ack") return;
      this.options.log?.(`the cloud refused event ${message.seq} of job ${message.jobId}: ${message.error}`);
    }
    if (message.type === "assign") this.claims.set(message.job.id, message.claim);
    this.options.onMessage(message);
  }

  /** The hub takes these optional frames: what it should know is sent now. */
  private welcome(frames: string[]): void {
    this.welcomed = new Set(frames);
    if (this.llama) this.sendOptional({ type: "llama", device: this.llama });
    if (this.uploadingJobs.size > 0 || this.released.size > 0) this.sendState();
  }

  private sendState(): void {
    if (!this.welcomed.has("state")) return;
    const released = [...this.released];
    this.send({ type: "state", uploading: [...this.uploadingJobs], ...(released.length > 0 ? { released } : {}) });
    // Told once: a link that drops before the hub read it reconnects with a hello that no longer holds these.
    if (this.socket?.readyState === WebSocket.OPEN) this.released.clear();
  }

  /** A frame an older hub does not know (it would close the link): sent only where the hub's welcome named it. */
  private sendOptional(message: Extract<WorkerMessage, { type: "llama" | "state" }>): void {
    if (this.welcomed.has(message.type)) this.send(message);
  }

  private send(message: WorkerMessage): void {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.sendNow(this.socket, message);
  }

  private sendNow(socket: WebSocket, message: WorkerMessage): void {
    socket.send(JSON.stringify(message));
  }
}
