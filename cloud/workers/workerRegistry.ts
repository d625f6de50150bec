/**
 * The worker list (`GET /v1/workers`), kept in the store so that every instance on one database lists every worker,
 * whichever instance its link reached. The instance that holds a link writes its row on hello, when the worker reports
 * its llama.cpp device, on each change of what the worker does, and when the link closes; while links are open it beats their `last_seen_at` in one statement.
 * A row whose beats stopped (its instance was killed, or lost the database) is listed as gone once it is older than
 * STALE_MS, so the list never shows a worker as connected through an instance that is no longer there.
 *
 * Each worker's writes are chained, so a quick hello-then-close can never land in the store the other way round, and
 * fenced by the link's `connectedAt`: a worker that reconnected through another instance is not marked gone when the
 * old link's close arrives late here.
 */
import type { CloudContext } from "../context.js";
import type { WorkerDevice, WorkerInfo, WorkerLlamaDevice, WorkerState } from "../../sdk/api/workers.js";
import type { WorkersTable } from "../store/schema.js";

/** How often an instance says its links are open. */
export const WORKER_BEAT_MS = Number(process.env.SVC_WORKER_BEAT_MS) || 5_000;
/** A connected worker not beaten for this long is gone: its instance stopped beating. */
const STALE_MS = WORKER_BEAT_MS * 3;
/** How long a gone worker stays in the list. */
const GONE_KEPT_MS = 60 * 60 * 1000;

export interface WorkerFacts {
  workerId: string;
  name: string;
  host: string;
  backends: string[];
  devices: WorkerDevice[];
  worldSize: number;
}

export class WorkerRegistry {
  private readonly writes = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  /** The beat in progress: at most one at a time, and awaited on shutdown. */
  private beating: Promise<void> | null = null;

  constructor(
    private readonly ctx: CloudContext,
    /** The ids of the workers linked to this instance now. */
    private readonly linked: () => string[],
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.beat(), WORKER_BEAT_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Every write queued so far, and the beat in progress, has landed (or failed and was logged): for shutdown. */
  async settled(): Promise<void> {
    await Promise.all([...this.writes.values(), this.beating]);
  }

  /** Records a new link; answers its `connectedAt`, which the link's later writes name. */
  connected(facts: WorkerFacts, state: WorkerState, jobIds: readonly string[]): string {
    const now = new Date().toISOString();
    const row: WorkersTable = {
      id: facts.workerId,
      name: facts.name,
      host: facts.host,
      backends: JSON.stringify(facts.backends),
      devices: JSON.stringify(facts.devices),
      world_size: facts.worldSize,
      state,
      job_ids: JSON.stringify(jobIds),
      connected_at: now,
      last_seen_at: now,
      disconnected_at: null,
      llama_device: null,
    };
    // A reconnect of the same process keeps the llama.cpp device it reported (it does not report it again).
    const { id: _id, llama_device: _llama, ...update } = row;
    this.write(facts.workerId, () =>
      this.ctx.db
        .insertInto("workers")
        .values(row)
        .onConflict((conflict) => conflict.column("id").doUpdateSet(update))
        .execute(),
    );
    return now;
  }

  changed(workerId: string, connectedAt: string, state: WorkerState, jobIds: readonly string[]): void {
    const now = new Date().toISOString();
    this.write(workerId, () =>
      this.ctx.db
        .updateTable("workers")
        .set({ state, job_ids: JSON.stringify(jobIds), last_seen_at: now })
        .where("id", "=", workerId)
        .where("connected_at", "=", connectedAt)
        .execute(),
    );
  }

  /** What the worker's llama.cpp runs on, once its runtime loaded. */
  llamaDevice(workerId: string, connectedAt: string, device: WorkerLlamaDevice): void {
    this.write(workerId, () =>
      this.ctx.db
        .updateTable("workers")
        .set({ llama_device: JSON.stringify(device) })
        .where("id", "=", workerId)
        .where("connected_at", "=", connectedAt)
        .execute(),
    );
  }

  disconnected(workerId: string, connectedAt: string): void {
    const now = new Date().toISOString();
    this.write(workerId, () =>
      this.ctx.db
        .updateTable("workers")
        .set({ state: "gone", job_ids: "[]", last_seen_at: now, disconnected_at: now })
        .where("id", "=", workerId)
        .where("connected_at", "=", connectedAt)
        .execute(),
    );
  }

  /** Connected workers first (by name), then the gone ones, most recently seen first. */
  async list(): Promise<WorkerInfo[]> {
    const now = Date.now();
    const rows = await this.ctx.db
      .selectFrom("workers")
      .selectAll()
      .where("last_seen_at", ">=", new Date(now - GONE_KEPT_MS).toISOString())
      .execute();
    const workers = rows.map((row) => toWorkerInfo(row, now));
    const rank = (w: WorkerInfo) => (w.state === "gone" ? 1 : 0);
    return workers.sort((a, b) => rank(a) - rank(b) || (rank(a) === 0 ? a.name.localeCompare(b.name) : b.lastSeenAt.localeCompare(a.lastSeenAt)));
  }

  private write(workerId: string, run: () => Promise<unknown>): void {
    const previous = this.writes.get(workerId) ?? Promise.resolve();
    const next = previous
      .then(run)
      .then(
        () => undefined,
        (err) => console.error(`svc cloud: could not update worker ${workerId} in the worker list: ${(err as Error).message}`),
      )
      .finally(() => {
        if (this.writes.get(workerId) === next) this.writes.delete(workerId);
      });
    this.writes.set(workerId, next);
  }

  /** Says this instance's links are open, and forgets workers gone for longer than the list keeps them. */
  private beat(): Promise<void> {
    this.beating ??= this.beatOnce().finally(() => (this.beating = null));
    return this.beating;
  }

  private async beatOnce(): Promise<void> {
    try {
      const now = Date.now();
      const ids = this.linked();
      if (ids.length > 0) {
        await this.ctx.db
          .updateTable("workers")
          .set({ last_seen_at: new Date(now).toISOString() })
          .where("id", "in", ids)
          .where("disconnected_at", "is", null)
          .execute();
      }
      await this.ctx.db
        .deleteFrom("workers")
        .where("last_seen_at", "<", new Date(now - GONE_KEPT_MS).toISOString())
        .execute();
    } catch (err) {
      console.error(`svc cloud: worker list beat failed (retrying): ${(err as Error).message}`);
    }
  }
}

function toWorkerInfo(row: WorkersTable, now: number): WorkerInfo {
  const stale = row.disconnected_at === null && now - Date.parse(row.last_seen_at) > STALE_MS;
  return {
    id: row.id,
    name: row.name,
    host: row.host,
    backends: parseList<string>(row.backends),
    devices: parseList<WorkerDevice>(row.devices),
    worldSize: Number(row.world_size),
    llamaDevice: parseObject<WorkerLlamaDevice>(row.llama_device),
    state: stale ? "gone" : (row.state as WorkerState),
    jobIds: stale ? [] : parseList<string>(row.job_ids),
    connectedAt: row.connected_at,
    lastSeenAt: row.last_seen_at,
    disconnectedAt: row.disconnected_at ?? (stale ? row.last_seen_at : null),
  };
}

function parseList<T>(text: string): T[] {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? (value as T[]) : [];
  } catch {
    return [];
  }
}

function parseObject<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as T) : null;
  } catch {
    return null;
  }
}
