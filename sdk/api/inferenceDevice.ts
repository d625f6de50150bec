import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";

/** Where a loaded model's layers sit: `gpuLayers` of its `layers` on the device (0 on the CPU). */
export const InferenceModelPlacement = T.Object({ file: T.String(), gpuLayers: T.Integer(), layers: T.Integer() });

/**
 * What the cloud's llama.cpp decodes on (/readyz, and the endpoint page of a deployment served by llama.cpp): `cpu` or
 * the GPU build that loaded, the GPUs' names, device memory, why the CPU serves when a GPU was allowed, and the
 * loaded models' offloaded layers.
 */
export const InferenceDevice = T.Object({
  type: T.String(),
  names: T.Array(T.String()),
  vramTotalBytes: T.Number(),
  vramFreeBytes: T.Number(),
  fallbackReason: T.Optional(T.String()),
  models: T.Array(InferenceModelPlacement),
});
export type InferenceDeviceReport = Static<typeof InferenceDevice>;
