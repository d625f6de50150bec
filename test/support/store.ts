/**
 * Opens the store of a running test cloud (its SQLite file, or its PostgreSQL database) beside it,
 * for a test that reads rows or sets state no API sets (a timestamp in the past).
 */
import { openStore, type Store } from "../../cloud/store/db.js";
import type { TestCloud } from "./cloud.js";

export async function withStore<T>(cloud: TestCloud, use: (db: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ dataDir: cloud.dataDir, databaseUrl: cloud.databaseUrl });
  try {
    return await use(store.db);
  } finally {
    await store.close();
  }
}
