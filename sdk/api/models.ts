/** Base models: GGUF files served (and trained) locally, or OpenAI-compatible upstream servers. */
import type { Static } from "@sinclair/typebox";
import { route } from "./route.js";
import * as T from "./t.js";

const nullable = <S extends Parameters<typeof T.Union>[0][number]>(schema: S) => T.Union([schema, T.Null()]);

export const BaseModel = T.Object({
  name: T.String(),
  /** "gguf" for a local file served by llama.cpp, "upstream" for an OpenAI-compatible server. */
  source: T.Union([T.Literal("gguf"), T.Literal("upstream")]),
  /** Whether svc can train adapters for it: a GGUF of a trainable architecture (llama, qwen2, qwen3). */
  trainable: T.Boolean(),
  /** One line saying why it cannot be trained (it can still be served); null when trainable. */
  notTrainableReason: nullable(T.String()),
  /**
   * Facts read from the GGUF header at registration; null for upstream servers (and for a file
   * that could not be read again since). `parameters` counts weights, e.g. 596049920 for Qwen3 0.6B.
   */
  architecture: nullable(T.String()),
  parameters: nullable(T.Number()),
  /** e.g. "Q4_K_M", "Q8_0", "F16". */
  quantization: nullable(T.String()),
  /** Context the model was trained for, in tokens. */
  contextLength: nullable(T.Integer()),
  sizeBytes: nullable(T.Number()),
  hasChatTemplate: nullable(T.Boolean()),
  createdAt: T.String(),
});
export type BaseModel = Static<typeof BaseModel>;

export const RegisterModelBody = T.Object({
  /** Optional for a GGUF: the cloud names it after its general.name (or file name). */
  name: T.Optional(T.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$", errorMessage: "name must be 1-80 characters of letters, digits, '.', '_', ':' and '-'" })),
  /** Absolute path of a GGUF file on the cloud's machine. */
  path: T.Optional(T.String({ minLength: 1 })),
  /** Base URL of an OpenAI-compatible server, e.g. http://gpu-box:8000/v1. */
  upstreamUrl: T.Optional(T.String({ minLength: 1 })),
  /** Model name to send upstream (e.g. the vLLM LoRA module name). */
  adapterModel: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
  replace: T.Optional(T.Boolean()),
});

export const modelsApi = {
  listModels: route({ method: "GET", path: "/v1/models", response: T.Array(BaseModel) }),
  /** Takes the machine's worker token: model files are paths on the cloud's machine. */
  registerModel: route({ method: "POST", path: "/v1/models", body: RegisterModelBody, args: (input: Static<typeof RegisterModelBody>) => ({ body: input }), response: BaseModel, status: 201 }),
};
