/**
 * Storage failures a user can act on: a full or read-only disk under the cloud's data dir (files, SQLite) or a full
 * or read-only PostgreSQL. Each becomes a 507 whose message says what is full or read-only and where, is logged once
 * per episode (not once per request while the disk stays full), and makes /readyz fail until a write works again.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { HttpError } from "./errors.js";

export type StorageProblem = "full" | "read_only";

/** errno codes, SQLite result codes (better-sqlite3's `code`), PostgreSQL SQLSTATEs. */
const PROBLEM_BY_CODE: Record<string, StorageProblem> = {
  ENOSPC: "full",
  EDQUOT: "full",
  SQLITE_FULL: "full",
  "53100": "full", // disk_full
  EROFS: "read_only",
  SQLITE_READONLY: "read_only",
  SQLITE_READONLY_DBMOVED: "read_only",
  SQLITE_READONLY_DIRECTORY: "read_only",
  "25006": "read_only", // read_only_sql_transaction (a hot standby, default_transaction_read_only)
};

/** What kind of storage failure `err` (or an error it wraps) is, if it is one. */
export function storageProblemOf(err: unknown): StorageProblem | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    const problem = typeof e.code === "string" ? PROBLEM_BY_CODE[e.code] : undefined;
    if (problem) return problem;
    if (typeof e.code === "string" && e.code.startsWith("SQLITE_READONLY")) return "read_only"; // every extended code
  }
  return undefined;
}

export class StorageHealth {
  private failing: { problem: StorageProblem; since: string } | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly log: (line: string) => void,
    /** Proves a write works (a small file in the data dir and a database write); throws when it does not. */
    private readonly probeWrite: () => Promise<void>,
  ) {}

  /** The 507 for a storage failure; the first one of an episode is logged. */
  refuse(problem: StorageProblem, err: unknown): HttpError {
    if (!this.failing) {
      this.failing = { problem, since: new Date().toISOString() };
      this.log(
        `svc cloud: storage ${problem === "full" ? "is full" : "is read-only"} under ${this.dataDir}: ${(err as Error)?.message ?? err}; writes fail until it is fixed (logged once)`,
      );
    }
    return new HttpError(507, problem === "full" ? "storage_full" : "storage_read_only", this.describe(problem));
  }

  /** Undefined while writes work; otherwise why not. Re-probes a failing store, so /readyz recovers on its own. */
  async notReadyReason(): Promise<string | undefined> {
    if (!this.failing) return undefined;
    try {
      await this.probeWrite();
    } catch (err) {
      const problem = storageProblemOf(err) ?? this.failing.problem;
      return this.describe(problem);
    }
    this.log(`svc cloud: storage under ${this.dataDir} accepts writes again`);
    this.failing = undefined;
    return undefined;
  }

  private describe(problem: StorageProblem): string {
    return problem === "full"
      ? `the cloud cannot save this: the disk holding its data (${this.dataDir}) is full; free some space and retry`
      : `the cloud cannot save this: its data (${this.dataDir}) is on a read-only file system or database; make it writable and retry`;
  }
}

/** Writes and removes a small file in the data dir: fails with ENOSPC / EROFS like any other write there. */
export async function probeDataDir(dataDir: string): Promise<void> {
  const probe = path.join(dataDir, `.write-probe-${process.pid}`);
  await fs.writeFile(probe, "svc write probe\n".repeat(256));
  await fs.rm(probe, { force: true });
}
