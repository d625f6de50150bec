/** What every route module gets: where the project is, how to reach the cloud, how to run the CLI. */
import type { StudioApi, StudioDownloads, StudioStreams } from "../sdk/api/studio.js";
import type { RouteHandlers } from "../server-shared/serveRoute.js";
import type { SessionSource } from "./session.js";
import type { SvcCommand } from "./svcCommand.js";
import type { TrainingRunner } from "./trainingRun.js";
import type { DatasetPreviews } from "./datasetPreview.js";
import type { RelayedJobList } from "./relayedJobList.js";
import type { ExportProgressBoard } from "./exportProgress.js";

export interface StudioContext {
  projectDir: string;
  svcCommand: SvcCommand;
  /** The environment of `svc` children: this process's, plus the configured cloud URL. */
  childEnv: NodeJS.ProcessEnv;
  sessions: SessionSource;
  training: TrainingRunner;
  datasetPreviews: DatasetPreviews;
  /** The cloud's job list as last relayed, and the watch that tells when it changes. */
  jobList: RelayedJobList;
  /** How far each export the UI started has got (studio/mergedExport.ts writes, `GET /api/exports/:id` reads). */
  exports: ExportProgressBoard;
}

/** The studio's handlers, one per route of its contract (sdk/api/studio.ts); each route module answers some of them. */
export type StudioHandlers = RouteHandlers<StudioApi & StudioStreams & StudioDownloads>;
