// The quickstart trainer: teaches svc-tiny to answer every question with a small JSON object,
// {"answer": "..."}, instead of a sentence. Run it with `npx svc start` in this folder.
import { createSvc, createTrainer } from "svc-studio";

export const trainer = createTrainer({
  name: "quickstart-json-answers",
  model: "svc-tiny",
  dataset: "data/train.jsonl",
  evalDataset: "data/eval.jsonl",
  lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj", "o_proj"] }, // attention only: enough for a format, and fast
  maxSteps: 60,
  learningRate: 3e-3,
  batchSize: 8,
  evalSteps: 10,
  saveSteps: 20,
  seed: 42,
  // At the start, each checkpoint and the end the model answers the first 8 eval prompts; an
  // answer passes when it is JSON with a string "answer" (the job page shows the pass rate rise).
  graders: ["json_valid", { type: "json_schema", schema: { type: "object", required: ["answer"], properties: { answer: { type: "string" } } } }],
});

export default createSvc({ trainer });
