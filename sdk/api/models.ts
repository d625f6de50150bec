/** Base models: GGUF files served (and trained) locally, or OpenAI-compatible upstream servers. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { route } from "./route.js";

const [nullableString, nullableNumber] = [T.Union([T.String(), T.Null()]), T.Union([T.Number(), T.Null()])];

export const BaseModel = T.Object({
  name: T.String(),
  /** "gguf" for a local file served by llama.cpp, "upstream" for an OpenAI-compatible server. */
  source: T.Union([T.Literal("gguf"), T.Literal("upstream")]),
  /** Whether svc can train adapters for it: a GGUF of a trainable architecture (llama, qwen2, qwen3). */
  trainable: T.Boolean(),
  /** One line saying why it cannot be trained (it can still be served); null when trainable. */
  notTrainableReason: nullableString,
  /**
   * Facts read from the GGUF header at registration; null for upstream servers (and for a file
   * that could not be read again since). `parameters` counts weights, e.g. 596049920 for Qwen3 0.6B.
   */
  architecture: nullableString,
  parameters: nullableNumber,
  /** e.g. "Q4_K_M", "Q8_0", "F16". */
  quantization: nullableString,
  /** Context the model was trained for, in tokens. */
  contextLength: nullableNumber,
  sizeBytes: nullableNumber,
  hasChatTemplate: T.Union([T.Boolean(), T.Null()]),
  /**
   * An upstream vLLM server that loads svc's adapters at run time: the folder the cloud writes each
   * deployed adapter's PEFT files into, and the same folder as the vLLM server reads it (a shared path).
   */
  loraDir: T.Optional(T.Object({ cloud: T.String(), server: T.String() })),
  /**
   * The Hugging Face folder the GGUF was converted from (`svc models add FOLDER`), on the cloud's
   * machine: the torch backend trains from its safetensors while it is there.
   */
  hfFolder: T.Optional(T.String()),
  createdAt: T.String(),
});
export type BaseModel = Static<typeof BaseModel>;

const RegisterModelBody = T.Object({
  /** Default for a GGUF: a slug of its general.name, else of its file name. */
  name: T.Optional(
    T.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$", errorMessage: "name must be 1-80 characters of letters, digits, '.', '_', ':' and '-'" }),
  ),
  /** Absolute path of a GGUF file on the cloud's machine. */
  path: T.Optional(T.String({ minLength: 1 })),
  /** Base URL of an OpenAI-compatible server, e.g. http://gpu-box:8000/v1. */
  upstreamUrl: T.Optional(T.String({ minLength: 1 })),
  /** Model name to send upstream (e.g. the vLLM LoRA module name). */
  adapterModel: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
  /**
   * For a vLLM upstream started with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True: an absolute folder on the
   * cloud's machine that the vLLM server can read too. Deployments of an adapter on this model write
   * its PEFT files there and load them with /v1/load_lora_adapter.
   */
  loraDir: T.Optional(T.String({ minLength: 1 })),
  /** The same folder as the vLLM server sees it, when it is mounted elsewhere there (default: loraDir). */
  loraDirOnServer: T.Optional(T.String({ minLength: 1 })),
  /** The Hugging Face folder `path` was converted from (absolute, on the cloud's machine, with a config.json). */
  hfFolder: T.Optional(T.String({ minLength: 1 })),
  replace: T.Optional(T.Boolean()),
});

export type RegisterModelInput = Static<typeof RegisterModelBody>;

export const modelsApi = {
  listModels: route({ method: "GET", path: "/v1/models", response: T.Array(BaseModel) }),
  /** Takes the machine's worker token: model files are paths on the cloud's machine. */
  registerModel: route({
    method: "POST",
    path: "/v1/models",
    body: RegisterModelBody,
    args: (input: RegisterModelInput) => ({ body: input }),
    response: BaseModel,
    status: 201,
  }),
};
