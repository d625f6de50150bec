/**
 * Merged export (issue 27): an adapter trained on the quickstart data (the JSON answer format) merged
 * into svc-tiny in Q8_0 and F16, loaded by llama.cpp with no adapter, against base + adapter: greedy
 * answers equal on how many eval prompts, the eval answers' perplexity and its relative difference,
 * the merge's time and the files' sizes.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readChatJsonl } from "../../engine/data/chat-jsonl.js";
import { mergeLora, type MergedWeightType } from "../../engine/gguf/merge-lora.js";
import { QUICKSTART_HYPERPARAMETERS } from "../../engine/train/quickstart.js";
import { trainLora } from "../../engine/train/lora-trainer.js";
import { formatBytes } from "../../sdk/modelFacts.js";
import { compareExport } from "../support/exportParity.js";
import { disposeLlamaCppReference } from "../support/llamaCppReference.js";
import { report } from "./stats.js";

const BASE = "models/svc-tiny.gguf";
const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-export-"));
try {
  const evalSet = await readChatJsonl("examples/quickstart/data/eval.jsonl");
  const train = await readChatJsonl("examples/quickstart/data/train.jsonl");
  const trained = await trainLora({ baseModel: BASE, train, eval: evalSet, outputDir: dir, ...QUICKSTART_HYPERPARAMETERS });
  const adapter = trained.artifacts.at(-1)!.path;
  console.log(`base ${BASE} ${formatBytes(statSync(BASE).size)}, adapter ${formatBytes(statSync(adapter).size)}`);
  for (const type of ["q8_0", "f16"] as MergedWeightType[]) {
    const merged = path.join(dir, `merged-${type}.gguf`);
    const started = performance.now();
    await mergeLora({ base: BASE, adapter, out: merged, type });
    const mergeMs = performance.now() - started;
    const parity = await compareExport({ base: BASE, adapter, merged, examples: evalSet });
    console.log(
      `${type}: ${formatBytes(statSync(merged).size)}, merged in ${mergeMs.toFixed(0)} ms; greedy answers equal to base+adapter on ${parity.sameAnswers}/${parity.prompts} eval prompts (the adapter changes ${parity.changedByAdapter}/${parity.prompts} of base's)`,
    );
    if (parity.firstDifference) console.log(`  first difference: ${JSON.stringify(parity.firstDifference)}`);
    console.log(
      `  eval answers' perplexity: base ${parity.perplexity.base.toFixed(4)}, base+adapter ${parity.perplexity.adapter.toFixed(4)}, merged ${parity.perplexity.merged.toFixed(4)} (${(parity.perplexityRelativeDifference * 100).toFixed(3)}% apart)`,
    );
    report(`export ${type}: same greedy answers`, parity.sameAnswers, "prompts", "eval prompts", parity.prompts);
    report(`export ${type}: perplexity`, parity.perplexity.merged, "ppl", "base+adapter", parity.perplexity.adapter, false);
  }
} finally {
  await disposeLlamaCppReference();
  rmSync(dir, { recursive: true, force: true });
}
