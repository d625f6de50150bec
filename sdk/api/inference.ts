/** Chat with a job's adapter, a checkpoint or a base model, scoped to the caller's project. */
import type { Static } from "@sinclair/typebox";
import { TargetBody } from "./deployments.js";
import { route } from "./route.js";
import * as T from "./t.js";

export const ChatMessage = T.Object({ role: T.Union([T.Literal("system"), T.Literal("user"), T.Literal("assistant")]), content: T.String() });
export type ChatMessage = Static<typeof ChatMessage>;

/** Typed here, checked by the OpenAI request reader (cloud/inference/openaiRequest.ts), whose 400s name each field. */
const checkedLater = <V>() => T.Optional(T.Unsafe<V>({}));

/** An OpenAI chat request with a `target` instead of a model name; more OpenAI fields ride along. */
export const InferenceChatBody = T.Object(
  {
    projectId: T.Optional(T.String({ minLength: 1 })),
    target: T.Unsafe<Static<typeof TargetBody>>({}),
    messages: T.Unsafe<ChatMessage[]>({}),
    stream: checkedLater<boolean>(),
    temperature: checkedLater<number>(),
    top_p: checkedLater<number>(),
    max_tokens: checkedLater<number>(),
    stop: checkedLater<string | string[]>(),
    seed: checkedLater<number>(),
  },
  { additionalProperties: true },
);
export type InferenceChatInput = Omit<Static<typeof InferenceChatBody>, "projectId"> & { [extra: string]: unknown };

/** JSON for `stream: false`, OpenAI-style SSE chunks for `stream: true`: the caller reads the response. */
export const inferenceChatRoute = route({ method: "POST", path: "/v1/inference/chat", body: InferenceChatBody, project: "body?" });
