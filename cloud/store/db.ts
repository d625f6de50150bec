/**
 * Opens the store: SQLite in the data dir by default, PostgreSQL when a URL is given.
 * SQLite runs in WAL mode with synchronous=NORMAL: durable across process crashes (a committed
 * transaction survives kill -9), fast, and readable while a writer is active.
 */
import path from "node:path";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import type { Database } from "./schema.js";
import { migrateToLatest } from "./migrations.js";
import { withStatementCache } from "./statementCache.js";
import { withSqliteBinding } from "./sqliteBinding.js";

export type Store = Kysely<Database>;

export interface StoreInfo {
  db: Store;
  dialect: "sqlite" | "postgres";
  /** Closes pools and file handles; safe to call once. */
  close(): Promise<void>;
}

export async function openStore(options: { dataDir: string; databaseUrl?: string }): Promise<StoreInfo> {
  const info = options.databaseUrl ? await openPostgres(options.databaseUrl) : await openSqlite(options.dataDir);
  try {
    await migrateToLatest(info.db);
  } catch (err) {
    await info.close();
    throw err;
  }
  return info;
}

async function openSqlite(dataDir: string): Promise<StoreInfo> {
  const { default: SQLite } = await import("better-sqlite3");
  const file = withSqliteBinding(() => new SQLite(path.join(dataDir, "svc.db")));
  file.pragma("journal_mode = WAL");
  file.pragma("synchronous = NORMAL");
  file.pragma("foreign_keys = ON");
  file.pragma("busy_timeout = 5000");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(file) }) });
  return { db, dialect: "sqlite", close: () => db.destroy() };
}

async function openPostgres(url: string): Promise<StoreInfo> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: "postgres", close: () => db.destroy() };
}
