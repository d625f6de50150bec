/**
 * The job page's Export row (issue 27): the size it shows before writing, per format, and what it says once saved:
 * where the file went, and for Ollama the `ollama create` to run, named as `svc export` names the model.
 */
import assert from "node:assert/strict";
import { exportSavedText, exportSizeEstimate, mergedSizeEstimate } from "../../../ui-shared/adapterFiles.js";

describe("Export row", () => {
  const offer = { ggufBytes: 50_000, peftBytes: 51_000 };

  it("sizes each format from the base and the adapter before anything is written", () => {
    const facts = { parameters: 1_000_000, baseBytes: 2_000_000, quant: "q8_0" as const, offer };
    assert.equal(exportSizeEstimate("gguf-merged", facts), mergedSizeEstimate(1_000_000, "q8_0"));
    assert.equal(exportSizeEstimate("lmstudio", { ...facts, quant: "f16" }), 2_000_000);
    assert.equal(exportSizeEstimate("ollama", facts), 2_050_000, "the base file as it is, plus the adapter");
    assert.equal(exportSizeEstimate("peft", facts), 51_000);
    assert.equal(exportSizeEstimate("ollama", { ...facts, baseBytes: null }), undefined, "unknown, not guessed");
    assert.equal(exportSizeEstimate("peft", { ...facts, offer: { ggufBytes: 1, peftBytes: null } }), undefined);
  });

  it("says where the export went, and the ollama create to run (browser zip, VS Code folder)", () => {
    assert.deepEqual(exportSavedText("ollama", { name: "Quickstart-1a2b3c4d-step-20-ollama.zip" }), {
      text: "Downloaded Quickstart-1a2b3c4d-step-20-ollama.zip. Unzip it, then in its folder run:",
      command: "ollama create quickstart-1a2b3c4d -f Modelfile",
    });
    assert.deepEqual(exportSavedText("ollama", { name: "quickstart-1a2b3c4d-ollama", path: "/w/quickstart-1a2b3c4d-ollama" }), {
      text: "Saved /w/quickstart-1a2b3c4d-ollama. In that folder run:",
      command: "ollama create quickstart-1a2b3c4d -f Modelfile",
    });
    assert.match(exportSavedText("lmstudio", { name: "q-1a2b3c4d-q8_0-lmstudio.zip" }).text, /Unzip it into LM Studio's models folder/);
    assert.deepEqual(exportSavedText("gguf-merged", { name: "q-1a2b3c4d-q8_0.gguf" }), { text: "Downloaded q-1a2b3c4d-q8_0.gguf." });
  });
});
