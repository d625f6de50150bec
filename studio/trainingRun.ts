/**
 * `POST /api/train`: one `svc start` at a time, its raw stdout+stderr streamed as they come.
 *
 * The run belongs to the studio, not to the HTTP request: when the browser tab closes or reloads
 * mid-run, the child keeps running (its job lives in the cloud and stays visible under Jobs), and
 * only the output after that point is discarded. Killing it would send `svc start` a signal that
 * cancels the job, and an accidental reload must not throw away a training run. The next
 * `POST /api/train` gets 409 until the run ends. `stop()` (the Stop button's `DELETE /api/train`,
 * or the studio closing) asks `svc start` to stop over its IPC channel (a signal on Windows would kill it
 * outright), which makes it cancel its job cleanly (as on Ctrl-C) instead of leaving an orphan process.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { TrainingStatus } from "../sdk/api/studio.js";
import { stopChild } from "../sdk/platform/stop.js";
import { StudioError } from "./errors.js";
import { spawnSvc, spawned, type SvcCommand } from "./svcCommand.js";

export interface RunOutput {
  write(chunk: Buffer): void;
  end(): void;
}

export interface ActiveRun {
  /** Names this run in `GET /api/train` (the `x-svc-run-id` header of its `POST /api/train`). */
  id: string;
  pid: number;
  startedAt: Date;
  /** Exit code (null when killed by a signal). */
  finished: Promise<number | null>;
}

export class TrainingRunner {
  private active: (ActiveRun & { child: ChildProcess }) | null = null;
  private last: TrainingStatus["last"];

  constructor(
    private readonly command: SvcCommand,
    private readonly projectDir: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get current(): ActiveRun | null {
    return this.active;
  }

  status(): TrainingStatus {
    const run = this.active;
    return { running: run !== null, ...(run ? { startedAt: run.startedAt.toISOString() } : {}), ...(this.last ? { last: this.last } : {}) };
  }

  /**
   * Starts `svc start` and pipes its output to `output` until it exits. Throws 409 while a run is
   * in flight, and 500 when the CLI cannot be started at all.
   */
  async start(output: RunOutput): Promise<ActiveRun> {
    if (this.active) {
      throw new StudioError(
        409,
        "training_in_progress",
        `A training run is already in progress (started ${this.active.startedAt.toISOString()}). Wait for it to finish; its job is listed under Jobs.`,
      );
    }
    const child = spawnSvc(this.command, ["start"], this.projectDir, this.env);
    // Claimed before the first await, so two requests arriving together cannot both start a run.
    const finished = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    const run = { id: randomUUID(), child, pid: child.pid ?? 0, startedAt: new Date(), finished };
    this.active = run;
    // Recorded before the output ends, so a client that asks right after its stream closed sees it.
    void finished.then((exitCode) => {
      this.last = { id: run.id, exitCode };
      if (this.active === run) this.active = null;
    });
    try {
      await spawned(child);
    } catch (err) {
      this.active = null;
      throw new StudioError(500, "spawn_failed", `cannot run ${this.command.join(" ")} start: ${(err as Error).message}`);
    }
    child.stdout!.on("data", (chunk: Buffer) => output.write(chunk));
    child.stderr!.on("data", (chunk: Buffer) => output.write(chunk));
    void finished.then(() => output.end());
    return run;
  }

  /** Ends a run in flight (a drain request: `svc start` cancels its job) and waits for it to exit. */
  async stop(): Promise<void> {
    const run = this.active;
    if (!run) return;
    await stopChild(run.child, { graceMs: 10_000 });
    await run.finished;
  }
}
