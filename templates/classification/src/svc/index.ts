// Starter project "classification" (svc init --template classification): teaches svc-tiny to label
// a short review with one word, e.g.
//   "Classify the sentiment as positive, negative or neutral: The soup was awful." -> negative
// Run it with `npx svc start`; the eval loss falls from about 5.6 to below 0.1 in well under a minute.
import { createSvc, createTrainer } from "svc-studio";

export const trainer = createTrainer({
  name: "sentiment-classification",
  model: "svc-tiny",
  dataset: "data/train.jsonl", // 120 reviews, 40 per label, OpenAI chat format
  evalDataset: "data/eval.jsonl", // 24 reviews the training set never shows
  lora: { r: 8, alpha: 16 }, // default: every attention and MLP projection
  maxSteps: 60,
  learningRate: 3e-3,
  batchSize: 8,
  evalSteps: 10,
  saveSteps: 30,
  seed: 42,
});

export default createSvc({ trainer });
