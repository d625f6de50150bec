/**
 * How a base model reads in VS Code's quick picks (Create Endpoint's "what to serve"): the same
 * facts as the studio's picker and `svc models list`, with the reason under a serve-only one.
 * No `vscode` import, so it is unit-tested like the tree rows.
 */
import { modelFactParts, SERVE_ONLY } from "../../sdk/modelFacts.js";
import type { BaseModel } from "../../sdk/wire.js";

export interface ModelPickText {
  label: string;
  description: string;
  detail?: string;
}

export function modelPickText(model: BaseModel): ModelPickText {
  const facts = [...modelFactParts(model), ...(model.trainable ? [] : [SERVE_ONLY])];
  return {
    label: `$(database) ${model.name}`,
    description: ["Base model", ...facts].join(" · "),
    ...(model.trainable ? {} : { detail: `Serve only: ${model.notTrainableReason ?? "svc cannot train it"}` }),
  };
}
