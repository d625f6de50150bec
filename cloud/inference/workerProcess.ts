/**
 * The cloud's side of the inference child process: starts it, keeps it warm, sends it requests,
 * turns its messages back into ChatStreams, and restarts it when it dies. Requests in flight
 * when the child dies fail with a readable 503 instead of hanging, and so do the requests waiting
 * on a start that never says "ready" (the child is killed after `startTimeoutMs`, then restarted).
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { packageRoot } from "../../sdk/packageRoot.js";
import { nodeScriptCommand, spawnNodeCommand } from "../../sdk/platform/nodeChild.js";
import { stopChild } from "../../sdk/platform/stop.js";
import { Channel } from "./channel.js";
import type { CancelSignal } from "./clientGone.js";
import { InferenceError, type ChatEvent, type ChatParams, type Usage } from "./types.js";
import type { FromWorker, ToWorker } from "./worker/protocol.js";
import type { InferenceWorkerSettings } from "./worker/inferenceChild.js";
import type { InferenceDeviceReport } from "../../sdk/api/inference.js";

/** How long a child may take from spawn to "ready" (loading node-llama-cpp's native binding). */
export const DEFAULT_INFERENCE_START_TIMEOUT_MS = 60_000;

interface Pending {
  channel: Channel<ChatEvent>;
}

export class InferenceWorkerProcess {
  private child: ChildProcess | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  /** Cancelled generations whose final usage someone waits for (the child still reports it). */
  private readonly abandoned = new Map<number, (usage: Usage) => void>();
  private nextId = 1;
  private restarts = 0;
  private closing = false;
  private deviceReport: InferenceDeviceReport | null = null;

  constructor(
    private readonly settings: InferenceWorkerSettings,
    private readonly log: (line: string) => void,
    private readonly startTimeoutMs = DEFAULT_INFERENCE_START_TIMEOUT_MS,
  ) {}

  /** Starts the child now, so the first request does not pay for process start-up. */
  start(): Promise<void> {
    return this.ensureChild();
  }

  /** What the running child's llama.cpp decodes on; null until it has loaded. */
  get device(): InferenceDeviceReport | null {
    return this.deviceReport;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * `onAbandonedUsage` hears what a generation cancelled by its client still cost (the child
   * reports the tokens it decoded before it stopped), so a client that leaves is charged for them.
   */
  generate(
    modelPath: string,
    adapterPath: string | null,
    params: ChatParams,
    signal?: CancelSignal,
    onAbandonedUsage?: (usage: Usage) => void,
  ): Channel<ChatEvent> {
    const id = this.nextId++;
    const channel = new Channel<ChatEvent>();
    this.pending.set(id, { channel });
    const cancel = () => {
      if (!this.pending.delete(id)) return;
      if (onAbandonedUsage) this.abandoned.set(id, onAbandonedUsage);
      this.send({ type: "cancel", id });
      channel.end();
    };
    channel.onAbandon = cancel;
    signal?.addEventListener("abort", cancel, { once: true });
    this.ensureChild()
      .then(() => {
        if (this.pending.has(id)) this.send({ type: "generate", id, modelPath, adapterPath, params });
      })
      .catch((err) => {
        this.pending.delete(id);
        channel.fail(err);
      });
    return channel;
  }

  async close(): Promise<void> {
    this.closing = true;
    const child = this.child;
    this.failAll(new InferenceError(503, "shutting_down", "the server is shutting down"));
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await stopChild(child, { graceMs: 3000 });
  }

  private send(message: ToWorker): void {
    if (this.child?.connected) this.child.send(message);
  }

  private ensureChild(): Promise<void> {
    if (this.closing) return Promise.reject(new InferenceError(503, "shutting_down", "the server is shutting down"));
    this.ready ??= this.spawnChild();
    return this.ready;
  }

  private async spawnChild(): Promise<void> {
    // Dynamic on purpose: it keeps inferenceChild.ts in its own bundle chunk, which the child runs as main.
    const { inferenceWorkerModuleUrl, CHILD_ENV } = await import("./worker/inferenceChild.js");
    const main = fileURLToPath(inferenceWorkerModuleUrl);
    const child = spawnNodeCommand(nodeScriptCommand(main, process.execPath), [], {
      cwd: packageRoot(),
      env: {
        ...process.env,
        [CHILD_ENV]: JSON.stringify(this.settings),
        // Each context decodes on a libuv pool thread (default 4 threads): leave room for every
        // context of a pool plus file and model loading, or streams would wait for a thread.
        UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? String(Math.max(4, this.settings.contextsPerModel + 2)),
      },
      // stdout is the daemon's machine-readable channel (its first line is the ports JSON): keep it clean.
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    });
    child.stdout!.pipe(process.stderr);
    // A send racing the child's death emits 'error' (channel closed); unhandled it would take the
    // whole cloud down. The 'exit' handler below fails the requests in flight and restarts.
    child.on("error", (err) => this.log(`inference worker: ${err.message}`));
    this.child = child;
    child.on("message", (message: FromWorker) => this.onMessage(message));
    let timer: NodeJS.Timeout | undefined;
    const started = new Promise<void>((resolve, reject) => {
      child.on("message", (message: FromWorker) => message.type === "ready" && resolve());
      child.once("exit", (code, signal) =>
        reject(new InferenceError(503, "inference_unavailable", `the inference worker failed to start (${signal ?? `exit ${code}`})`)),
      );
      // A child that never answers (a native binding stuck loading, a wedged disk) must not leave every
      // request waiting forever: kill it, which restarts it with backoff like any other exit.
      timer = setTimeout(() => {
        const seconds = Math.round(this.startTimeoutMs / 100) / 10;
        reject(
          new InferenceError(
            503,
            "inference_unavailable",
            `the inference worker did not start within ${seconds} s; it is being restarted, retry the request (see the cloud's log)`,
            { retryAfter: 5 },
          ),
        );
        this.log(`inference worker did not start within ${seconds} s; killing it`);
        child.kill("SIGKILL");
      }, this.startTimeoutMs);
      timer.unref();
    });
    child.once("exit", (code, signal) => this.onExit(child, code, signal));
    try {
      await started;
    } finally {
      clearTimeout(timer);
    }
    this.restarts = 0;
  }

  private onMessage(message: FromWorker): void {
    if (message.type === "ready") return;
    if (message.type === "device") {
      this.deviceReport = { ...message.device, models: message.models };
      return;
    }
    if (message.type === "batch") {
      for (const one of message.messages) this.onMessage(one);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) {
      const heard = this.abandoned.get(message.id);
      if (heard && message.type !== "text") {
        this.abandoned.delete(message.id);
        if (message.type === "done") heard(message.usage);
      }
      return;
    }
    if (message.type === "text") {
      pending.channel.push({ type: "text", text: message.text, ...(message.logprobs ? { logprobs: message.logprobs } : {}) });
    } else if (message.type === "done") {
      this.pending.delete(message.id);
      pending.channel.push({ type: "done", finishReason: message.finishReason, usage: message.usage });
      pending.channel.end();
    } else {
      this.pending.delete(message.id);
      pending.channel.fail(new InferenceError(message.status, message.code, message.message, message.param ? { param: message.param } : {}));
    }
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = null;
    this.ready = null;
    this.deviceReport = null;
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    this.failAll(
      new InferenceError(503, "inference_worker_crashed", `the inference worker stopped (${how}) while answering; it is restarting, retry the request`, {
        retryAfter: 1,
      }),
    );
    if (this.closing) return;
    this.log(`inference worker exited (${how}); restarting`);
    // Restart at once the first time, then back off so a crash loop does not spin the CPU.
    const delay = Math.min(250 * 2 ** this.restarts - 250, 10_000);
    this.restarts += 1;
    setTimeout(() => void this.ensureChild().catch((err) => this.log(String(err))), delay).unref();
  }

  private failAll(error: InferenceError): void {
    // A dead child reports no more usage; the listeners fall back to what they counted.
    this.abandoned.clear();
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.channel.fail(error);
    }
  }
}
