// Starter project "json-extraction" (svc init --template json-extraction): teaches svc-tiny to turn a
// sentence about a person into a JSON object of its facts, e.g.
//   "Extract as JSON: Anna, a pilot from Oslo, is 34." -> {"name":"Anna","age":34,"city":"Oslo","job":"pilot"}
// Run it with `npx svc start`; the eval loss falls from about 5.4 to about 0.3 in well under a minute.
import { createSvc, createTrainer } from "svc-studio";

export const trainer = createTrainer({
  name: "json-extraction",
  model: "svc-tiny",
  dataset: "data/train.jsonl", // 120 sentences in four phrasings, OpenAI chat format
  evalDataset: "data/eval.jsonl", // 20 sentences the training set never shows
  // Copying names and numbers out of the prompt needs attention and MLP adapters both.
  lora: { r: 8, alpha: 16, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
  maxSteps: 100,
  learningRate: 3e-3,
  batchSize: 8,
  evalSteps: 10,
  saveSteps: 50,
  seed: 42,
});

export default createSvc({ trainer });
