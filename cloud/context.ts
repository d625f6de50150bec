/**
 * Everything a request handler of the cloud needs, built once at start and passed explicitly
 * (no module-level singletons, so tests can run several clouds in one process).
 */
import type { Store } from "./store/db.js";
import type { JobEventBus } from "./domain/eventBus.js";
import type { JobListChanges } from "./domain/jobListChanges.js";
import type { CloudMetrics } from "./metrics.js";
import type { DeploymentChangeNotifier } from "./edge/changeNotifier.js";
import type { OpenStreams } from "./http/openStreams.js";
import type { StorageHealth } from "./http/storageHealth.js";
import type { ClusterSignals } from "./store/clusterSignals.js";

export interface Principal {
  kind: "anonymous" | "oauth" | "worker";
  /** The user behind the token; null for worker tokens. */
  userId: string | null;
}

/** Turns a bearer token into a principal, or null when this resolver does not know it. */
export type TokenResolver = (token: string) => Promise<Principal | null>;

export interface CloudContext {
  db: Store;
  dialect: "sqlite" | "postgres";
  dataDir: string;
  /** `http://127.0.0.1:P`, the control plane's own base URL (for links such as the device page). */
  cloudUrl: string;
  /** `http://127.0.0.1:E`, the edge listener. */
  edgeUrl: string;
  /** `localhost:E` by default: deployments answer at `<slug>.<deployDomain>`. */
  deployDomain: string;
  events: JobEventBus;
  /** Job-list version changes, told to watchers of the list (`GET /v1/jobs/watch`). */
  jobListChanges: JobListChanges;
  metrics: CloudMetrics;
  /** Extra token resolvers (OAuth access tokens) consulted after the built-in token table. */
  tokenResolvers: TokenResolver[];
  limits: { datasetBytes: number; artifactBytes: number };
  /** Deployment and key mutations announce themselves here so the edge's cache drops them at once. */
  deploymentChanges: DeploymentChangeNotifier;
  /** Open SSE responses, ended on shutdown so the process can exit. */
  openStreams: OpenStreams;
  /** Full or read-only storage: turns it into 507s, logs it once, and keeps /readyz failing until writes work. */
  storage: StorageHealth;
  /** Signals to the other instances sharing the database (PostgreSQL); a no-op on SQLite. */
  cluster: ClusterSignals;
}
