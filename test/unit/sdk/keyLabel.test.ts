import assert from "node:assert/strict";
import { KEY_LABEL_MAX, keyLabelLength, normalizeKeyLabel } from "../../../sdk/keyLabel.js";
import { keyLabelProblem } from "../../../ui-shared/format.js";

// Issue 12 item 8: the page counted UTF-16 units and the API accepted whitespace-only labels;
// both now use the one rule in sdk/keyLabel.ts (code points of the trimmed label, 1 to 80).
describe("key label rule (shared by the API and the page)", () => {
  it("counts code points of the trimmed label", () => {
    assert.equal(KEY_LABEL_MAX, 80);
    assert.equal(keyLabelLength("  ci  "), 2);
    assert.equal(keyLabelLength("🔑"), 1);
    assert.equal(normalizeKeyLabel("  prod bot \n"), "prod bot");
  });

  it("the page accepts 80 emoji (160 UTF-16 units) and refuses 81", () => {
    assert.equal(keyLabelProblem("🔑".repeat(80)), undefined);
    assert.equal(keyLabelProblem("🔑".repeat(81)), "Label is 81 characters; the limit is 80.");
  });

  it("the page refuses whitespace-only labels and ignores surrounding whitespace", () => {
    assert.equal(keyLabelProblem(" \t "), "Enter a label (1 to 80 characters).");
    assert.equal(keyLabelProblem(` ${"x".repeat(80)} `), undefined);
  });
});
