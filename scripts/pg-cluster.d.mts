// Types for scripts/pg-cluster.mjs, so TypeScript test runners can import it under `strict`.
export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/svc_test — use as SVC_TEST_DATABASE_URL. */
  readonly url: string;
  /** The cluster's PGDATA (also holds its Unix socket and server.log); deleted by stop(). */
  readonly dataDir: string;
  /** The postmaster's pid. */
  readonly pid: number;
  readonly port: number;
  readonly env: { SVC_TEST_DATABASE_URL: string };
  /** Stops the server (immediate mode) and deletes dataDir; safe to call twice. */
  stop(): Promise<void>;
}

export interface StartPgClusterOptions {
  /** Database created in the new cluster; default "svc_test". */
  database?: string;
  /** Stop and delete the cluster when this process exits, if stop() was not called; default true. */
  stopOnExit?: boolean;
}

export function startPgCluster(options?: StartPgClusterOptions): Promise<PgCluster>;
export function stopPgClusterSync(dataDir: string): void;
export function findPgBinDir(): string;
