/** Reads a deployment target from an untyped body, with 400s that name the offending field. */
import type { DeploymentTarget } from "../../sdk/wire.js";
import { badRequest } from "./errors.js";

const KINDS = ["adapter", "checkpoint", "base_model"];

export function parseTarget(value: unknown): DeploymentTarget {
  const t = value as Record<string, unknown>;
  if (!t || typeof t !== "object") throw badRequest("target must be an object", "unknown_target");
  if (typeof t.kind !== "string" || !KINDS.includes(t.kind)) {
    throw badRequest(`target.kind must be one of ${KINDS.map((k) => `"${k}"`).join(", ")}`, "unknown_target");
  }
  if (t.kind === "base_model") {
    if (typeof t.name !== "string" || !t.name) throw badRequest("target.name must name a base model", "unknown_target");
    return { kind: "base_model", name: t.name };
  }
  if (typeof t.jobId !== "string" || !t.jobId) throw badRequest("target.jobId must be a job id", "unknown_target");
  if (t.baseModel !== undefined && (typeof t.baseModel !== "string" || !t.baseModel)) {
    throw badRequest("target.baseModel must name a registered vLLM upstream model", "unknown_target");
  }
  const onBase = typeof t.baseModel === "string" ? { baseModel: t.baseModel } : {};
  if (t.kind === "adapter") return { kind: "adapter", jobId: t.jobId, ...onBase };
  if (typeof t.step !== "number" || !Number.isInteger(t.step) || t.step < 0) {
    throw badRequest("target.step must be a non-negative integer", "unknown_target");
  }
  return { kind: "checkpoint", jobId: t.jobId, step: t.step, ...onBase };
}
