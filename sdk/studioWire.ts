/**
 * Bodies of the studio's own `/api` routes that are not cloud resources, shared by the studio
 * server (studio/) and the UI's transports (webview/transport/), like `sdk/manifest.ts`.
 */

/** `GET /api/environment`: facts about the studio's machine. */
export interface StudioEnvironment {
  /** Whether Node on the studio's machine resolves `<slug>.localhost` (Quick start picks its URL form from it). */
  localhostSubdomainsResolve: boolean;
}

/** `GET /api/train`: whether a run is in flight, for every tab and panel, and how the last one ended. */
export interface TrainingStatus {
  running: boolean;
  /** ISO time the run in flight started. */
  startedAt?: string;
  /** The last run that ended: its id (the `x-svc-run-id` header of its `POST /api/train`) and exit code (null: ended by a signal). */
  last?: { id: string; exitCode: number | null };
}

/** Header of `POST /api/train` naming the run, so its client can ask `GET /api/train` how it ended. */
export const RUN_ID_HEADER = "x-svc-run-id";
