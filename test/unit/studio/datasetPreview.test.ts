/** How the studio reads `svc start --dry-run --preview --json`'s output (studio/datasetPreview.ts). */
import assert from "node:assert/strict";
import { NO_TRAINER_TEXT } from "../../../sdk/manifest.js";
import { dryRunJsonLines, type DryRunReport } from "../../../sdk/trainer/dryRunReport.js";
import { parsePreviewOutput } from "../../../studio/datasetPreview.js";

const report: DryRunReport = {
  trainer: "demo",
  model: "svc-tiny",
  tokenizer: null,
  maxSeqLength: 160,
  contextLength: 160,
  splits: [
    {
      split: "train",
      file: "data/train.jsonl",
      conversations: 1,
      tokens: null,
      trainedTokens: null,
      longest: null,
      errors: ["line 2: not valid JSON"],
      preview: { lengths: null, rows: [], issues: [{ line: 2, message: "not valid JSON" }], issueCount: 1 },
    },
  ],
  plan: null,
  estimate: { available: false, blocking: false, reason: "no file" },
  ok: false,
};

describe("studio: the dataset preview's answer", () => {
  it("is the report when the dry run finished, its verdict 'not ok' and exit 1 included", () => {
    assert.deepEqual(parsePreviewOutput(dryRunJsonLines(report).join("\n") + "\n", "", 1), { status: "ok", report });
  });

  it("is 'none' when the project registers no trainer", () => {
    assert.deepEqual(parsePreviewOutput("", `svc: ${NO_TRAINER_TEXT}\n`, 1), { status: "none" });
  });

  it("is the first line of the error otherwise, or the exit code when nothing was said", () => {
    assert.deepEqual(parsePreviewOutput("", "svc: dataset: cannot read /p/data/train.jsonl\n    at x\n", 1), {
      status: "error",
      error: "dataset: cannot read /p/data/train.jsonl",
    });
    assert.deepEqual(parsePreviewOutput("checking…\n", "", 137), { status: "error", error: "svc start --dry-run exited with code 137" });
  });
});
