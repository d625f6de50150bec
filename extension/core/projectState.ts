/**
 * Which welcome the svc views show, decided from plain facts about the workspace. The order is
 * the order a new user fixes things in: open a folder, have a project, have the CLI, have
 * credentials, have a trainer.
 */
import type { Manifest } from "../../ui-shared/transport.js";

export type ProjectState = "noFolder" | "noProject" | "noCli" | "noCredentials" | "noTrainer" | "ready";

export interface ProjectFacts {
  /** The first workspace folder, if any. */
  folder?: string;
  /** `src/svc/index.ts` exists in the folder. */
  hasTrainerSource: boolean;
  /** The workspace's `node_modules/svc-studio` (or its `.bin/svc`) or an `svc` on PATH was found. */
  hasCli: boolean;
  /** `$SVC_HOME/credentials.json` exists (anonymous or OAuth). */
  hasCredentials: boolean;
  /** The answer of `svc manifest --json`, once known (it runs a subprocess, so it comes later). */
  manifest?: Manifest;
}

export function projectState(facts: ProjectFacts): ProjectState {
  if (!facts.folder) return "noFolder";
  if (!facts.hasTrainerSource) return "noProject";
  if (!facts.hasCli) return "noCli";
  if (!facts.hasCredentials) return "noCredentials";
  if (facts.manifest && facts.manifest.status !== "ok") return "noTrainer";
  return "ready";
}

/** The studio (and so the trees) can answer once the CLI and credentials exist; a missing trainer does not hide jobs. */
export function canReachCloud(state: ProjectState): boolean {
  return state === "ready" || state === "noTrainer";
}

/** SPEC section 4 wording of the manifest states, for the welcome view and Run Training errors. */
export function manifestProblem(manifest: Manifest): string | undefined {
  if (manifest.status === "none") return "No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.";
  if (manifest.status === "error") return `Couldn't read manifest: ${manifest.error}`;
  return undefined;
}
