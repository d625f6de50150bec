/** Chat with a job's adapter, a checkpoint or a base model, scoped to the caller's project. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { DeploymentTarget } from "./deployments.js";
import { route } from "./route.js";

const ChatMessage = T.Object({
  role: T.Union([T.Literal("system"), T.Literal("user"), T.Literal("assistant")], {
    errorMessage: 'each message\'s role must be "system", "user" or "assistant"',
  }),
  content: T.String({ errorMessage: "each message's content must be a string" }),
});
export type ChatMessage = Static<typeof ChatMessage>;
/** A conversation to answer, oldest message first. */
export const ChatMessages = T.Array(ChatMessage, { minItems: 1, errorMessage: "messages must be a non-empty array of { role, content }" });

/** Longest generation one request may ask for; the context window usually caps it first. */
export const MAX_TOKENS_LIMIT = 4096;

/**
 * An OpenAI chat request with a `target` instead of a model name. The schema holds what the route reads itself; the
 * OpenAI fields (typed below for callers, more may ride along) are read, and refused by name, by cloud/inference/openaiRequest.ts.
 */
const InferenceChatBody = T.Object(
  { projectId: T.Optional(T.String({ minLength: 1 })), target: DeploymentTarget, messages: ChatMessages },
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
