/** Datasets: chat JSONL uploaded as the raw body, stored for training. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { route } from "./route.js";

export const Dataset = T.Object({
  id: T.String(),
  projectId: T.String(),
  name: T.String(),
  lineCount: T.Integer(),
  sizeBytes: T.Integer(),
  createdAt: T.String(),
});
export type Dataset = Static<typeof Dataset>;

/** The body is the JSONL itself (content-type application/jsonl), not JSON. */
export const uploadDatasetRoute = route({
  method: "POST",
  path: "/v1/datasets",
  query: T.Object({ projectId: T.String({ errorMessage: "projectId is required" }), name: T.Optional(T.String({ maxLength: 200 })) }),
  project: "query",
  response: Dataset,
  status: 201,
});
