/** Chat with a job's adapter, a checkpoint or a base model, scoped to the caller's project. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import type { DeploymentTarget } from "./deployments.js";
import { route } from "./route.js";

const ChatMessage = T.Object({ role: T.Union([T.Literal("system"), T.Literal("user"), T.Literal("assistant")]), content: T.String() });
export type ChatMessage = Static<typeof ChatMessage>;

/**
 * An OpenAI chat request with a `target` instead of a model name. The schema holds what the route reads itself; the
 * OpenAI fields (typed below for callers, more may ride along) are read, and refused by name, by cloud/inference/openaiRequest.ts.
 */
const InferenceChatBody = T.Object(
  { projectId: T.Optional(T.String({ minLength: 1 })), target: T.Unsafe<DeploymentTarget>({}), messages: T.Unsafe<ChatMessage[]>({}) },
  { additionalProperties: true },
);
type OpenAiFields = {
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string | string[];
  seed?: number;
  [extra: string]: unknown;
};
export type InferenceChatInput = Omit<Static<typeof InferenceChatBody>, "projectId"> & OpenAiFields;

/** JSON for `stream: false`, OpenAI-style SSE chunks for `stream: true`: the caller reads the response. */
export const inferenceChatRoute = route({ method: "POST", path: "/v1/inference/chat", body: InferenceChatBody, project: "body?" });

export { InferenceDevice, InferenceModelPlacement, type InferenceDeviceReport } from "./inferenceDevice.js";
