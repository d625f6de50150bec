/**
 * Who holds each claimed job, across the cloud instances sharing one PostgreSQL database. Each
 * instance tells the others (cluster signal `holding`) which jobs its worker links hold: at once on
 * a hello or an assignment, then every beat. A sweep every beat reads the claimed, unfinished jobs
 * from the store; one that no instance has said it holds for the grace period is failed (its worker
 * vanished, or the instance it was linked to died). A job first seen by the sweep (say, after this
 * instance started) gets the whole grace before it is judged.
 */
import type { CloudContext } from "../context.js";

export class LeaseTracker {
  /** Job id → when some instance (this one included) last said it holds the job. */
  private readonly lastHeld = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private readonly beatMs: number;

  constructor(
    private readonly ctx: CloudContext,
    private readonly graceMs: number,
    private readonly heldJobs: () => string[],
    private readonly fail: (jobId: string, workerName: string) => Promise<void>,
  ) {
    // Several beats per grace period, so one late signal never fails a held job.
    this.beatMs = Math.max(50, Math.min(2000, Math.floor(graceMs / 4)));
  }

  /** Starts beating and sweeping; returns how many claimed, unfinished jobs the store has now. */
  async start(): Promise<number> {
    const claimed = await this.claimedJobs();
    const now = Date.now();
    for (const job of claimed) if (!this.lastHeld.has(job.id)) this.lastHeld.set(job.id, now);
    this.timer = setInterval(() => void this.beat(), this.beatMs);
    this.timer.unref();
    return claimed.length;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** This instance's links hold `jobIds` (a hello, an assignment): recorded and told to the others now. */
  heldHere(jobIds: readonly string[]): void {
    if (jobIds.length === 0) return;
    this.heldElsewhere(jobIds);
    void this.ctx.cluster.signalList("holding", "jobs", jobIds);
  }

  heldElsewhere(jobIds: readonly string[]): void {
    const now = Date.now();
    for (const jobId of jobIds) this.lastHeld.set(jobId, now);
  }

  private async beat(): Promise<void> {
    const held = this.heldJobs();
    if (held.length > 0) this.heldHere(held);
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.sweep();
    } catch (err) {
      console.error(`svc cloud: lease sweep failed (retrying): ${(err as Error).message}`);
    } finally {
      this.sweeping = false;
    }
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    const claimed = await this.claimedJobs();
    const live = new Set<string>();
    for (const job of claimed) {
      live.add(job.id);
      const last = this.lastHeld.get(job.id);
      if (last === undefined) {
        this.lastHeld.set(job.id, now); // first seen: claimed since the last sweep
        continue;
      }
      if (now - last <= this.graceMs) continue;
      this.lastHeld.delete(job.id);
      await this.fail(job.id, workerName(job.worker_id));
    }
    for (const jobId of this.lastHeld.keys()) if (!live.has(jobId)) this.lastHeld.delete(jobId);
  }

  private claimedJobs() {
    return this.ctx.db.selectFrom("jobs").select(["id", "worker_id"]).where("status", "in", ["queued", "running"]).where("worker_id", "is not", null).execute();
  }
}

/** A worker id is `<name>-<8 hex>`: the name is what its user chose. */
export function workerName(workerId: string | null): string {
  return String(workerId).replace(/-[0-9a-f]{8}$/, "");
}
