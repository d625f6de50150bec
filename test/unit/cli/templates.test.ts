/** The starter projects of `svc init --template`: their files exist, their data is valid for svc-tiny, and eval is held out. */
import assert from "node:assert/strict";
import { isTemplateName, templateFiles, templateNames, UnknownTemplateError } from "../../../cli/project/templates.js";
import { validateChatJsonl } from "../../../sdk/jsonl.js";
import { SVC_TINY } from "../../../engine/model/config.js";

const userTexts = (jsonl: string) =>
  jsonl
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { messages: { content: string }[] }).messages[0].content);

describe("svc init templates", () => {
  it("are json-extraction, classification and translation", () => {
    assert.deepEqual(templateNames(), ["json-extraction", "classification", "translation"]);
    assert.equal(isTemplateName("quickstart"), false);
    assert.equal(isTemplateName("toString"), false, "no inherited names");
  });

  for (const name of templateNames()) {
    it(`${name}: a trainer for svc-tiny, and train/eval data that fit its context with eval prompts train never shows`, () => {
      const files = Object.fromEntries(templateFiles(name));
      assert.deepEqual(Object.keys(files), ["src/svc/index.ts", "data/train.jsonl", "data/eval.jsonl"]);
      assert.match(files["src/svc/index.ts"], /model: "svc-tiny"/);
      assert.match(files["src/svc/index.ts"], /export default createSvc\(\{ trainer \}\)/);
      for (const split of ["data/train.jsonl", "data/eval.jsonl"]) {
        const report = validateChatJsonl(files[split], { contextLength: SVC_TINY.contextLength });
        assert.deepEqual(report.errors, [], `${name} ${split}`);
        assert.ok(report.exampleCount >= 20, `${name} ${split} has ${report.exampleCount} examples`);
      }
      const train = new Set(userTexts(files["data/train.jsonl"]));
      const heldOut = userTexts(files["data/eval.jsonl"]).filter((text) => !train.has(text));
      assert.equal(heldOut.length, userTexts(files["data/eval.jsonl"]).length, "every eval prompt is new");
    });
  }

  it("an unknown name is refused with the valid ones, before anything is read", () => {
    assert.throws(
      () => templateFiles("poetry", "/nonexistent"),
      (err: unknown) => {
        assert.ok(err instanceof UnknownTemplateError);
        assert.equal(
          err.message,
          'unknown template "poetry"; choose one of: json-extraction, classification, translation (or no --template for the quickstart)',
        );
        return true;
      },
    );
  });
});
