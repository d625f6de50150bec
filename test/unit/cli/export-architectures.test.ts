/**
 * `svc export` on the real architectures (issue 27): random-weight llama, qwen2 and qwen3 models
 * around real vocabularies and chat templates (test/support/testModels.ts) and a random LoRA on every
 * projection (testAdapters.ts). Merged without rounding (F32), the model gives llama.cpp's own
 * base + adapter continuation token for token and its log-probabilities within 1e-3: the merge's
 * tensor names, layouts and scale are llama.cpp's for each architecture (what F16 and Q8_0 rounding
 * then costs is measured on a trained adapter, test/unit/engine/merge-lora.test.ts). The Ollama
 * Modelfile carries the family's template and stop tokens, read from the model's own chat template.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { mergeLora } from "../../../engine/gguf/merge-lora.js";
import { readGgufHeader } from "../../../engine/gguf/reader.js";
import { ollamaModelfile } from "../../../cli/export/ollamaModelfile.js";
import { compareWithReference, disposeLlamaCppReference, greedy, logProbabilities, tokenize } from "../../support/llamaCppReference.js";
import { buildTestAdapter } from "../../support/testAdapters.js";
import { buildTestModel, testModelsDir, type TestModelOptions } from "../../support/testModels.js";

const CASES: { options: TestModelOptions; template: RegExp; stops: string[] }[] = [
  {
    options: { arch: "llama", vocab: "llama-bpe", weightType: "F32" },
    template: /<\|start_header_id\|>\{\{ \.Role \}\}<\|end_header_id\|>/,
    stops: ["<|eot_id|>", "<|start_header_id|>"],
  },
  {
    options: { arch: "qwen2", vocab: "qwen2", weightType: "F32" },
    template: /<\|im_start\|>\{\{ \.Role \}\}\n\{\{ \.Content \}\}<\|im_end\|>/,
    stops: ["<|im_end|>"],
  },
  { options: { arch: "qwen3", vocab: "qwen2", weightType: "F32" }, template: /<\|im_start\|>assistant\n"""$/m, stops: ["<|im_end|>"] },
];

describe("svc export on real architectures", function () {
  this.timeout(240_000);
  after(disposeLlamaCppReference);

  for (const { options, template, stops } of CASES) {
    it(`${options.arch} (${options.vocab} vocabulary): the merged GGUF continues as base + adapter; the Modelfile speaks its chat format`, async () => {
      const base = await buildTestModel(options);
      const adapter = await buildTestAdapter(options);
      const merged = path.join(await testModelsDir(), `merged-${options.arch}-${options.vocab}.gguf`);
      await mergeLora({ base, adapter, out: merged, type: "f32" });
      const prompt = await tokenize(base, "Once upon a time");
      const adapted = await greedy(base, prompt, 8, { lora: adapter });
      assert.notDeepEqual(adapted, await greedy(base, prompt, 8), "the adapter changes the output");
      assert.deepEqual(await greedy(merged, prompt, 8), adapted);
      const diff = compareWithReference(await logProbabilities(merged, prompt), await logProbabilities(base, prompt, { lora: adapter }));
      assert.ok(diff.maxDiff < 1e-3 && diff.sameArgmax, JSON.stringify(diff));

      const modelfile = ollamaModelfile({ baseFile: "base.gguf", adapterFile: "lora.gguf", header: await readGgufHeader(base) });
      assert.match(modelfile, /^FROM \.\/base\.gguf\nADAPTER \.\/lora\.gguf$/m);
      assert.match(modelfile, template);
      for (const stop of stops) assert.match(modelfile, new RegExp(`^PARAMETER stop ${JSON.stringify(stop).replace(/[|]/g, "\\|")}$`, "m"));
    });
  }
});
