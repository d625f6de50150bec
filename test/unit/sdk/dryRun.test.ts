/** The dry run's pure parts: reading a split, planning the steps, and how the report reads. */
import assert from "node:assert/strict";
import { byteChatTokenizer } from "../../../engine/data/chat-tokenizer.js";
import { inspectSplit } from "../../../sdk/trainer/datasetStats.js";
import { evalBatches, planRun } from "../../../sdk/trainer/dryRunPlan.js";
import {
  dryRunJsonLines,
  dryRunText,
  formatDuration,
  isDryRunOutput,
  PREVIEW_CONTENT_CHARS,
  PREVIEW_ROWS,
  readDryRunJsonLines,
  type DryRunReport,
} from "../../../sdk/trainer/dryRunReport.js";

const chat = (user: string, assistant: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: assistant },
    ],
  });

describe("dry run: a split as the model's tokenizer sees it", () => {
  // svc-tiny renders <|bos|><|user|>…<|end|><|assistant|>…<|end|>: 5 special tokens plus the bytes.
  const text = [chat("hi", "hello"), "{oops", chat("x".repeat(200), "y"), "", chat("abc", "de")].join("\n");

  it("counts tokens and trained tokens of the conversations that would train, with the SDK check's errors", () => {
    const { report, rendered } = inspectSplit({ split: "train", file: "data/train.jsonl", text, tokenizer: byteChatTokenizer, maxSeqLength: 160 });
    assert.equal(report.conversations, 2);
    assert.equal(report.tokens, 5 + 2 + 5 + (5 + 3 + 2));
    assert.equal(report.trainedTokens, 5 + 1 + (2 + 1), "assistant bytes and their end token");
    assert.deepEqual(report.longest, { line: 3, tokens: 206 }, "the longest is shown even though it is refused");
    assert.deepEqual(report.errors, [
      "line 2: not valid JSON",
      "line 3: conversation is 206 tokens, longer than the model's context of 160 tokens (1 token = 1 byte)",
    ]);
    assert.deepEqual(
      rendered.map((r) => r.ids.length),
      [12, 10],
    );
  });

  it("--preview adds every length in file order (refused ones too), the first rows with their lines and every problem", () => {
    const { report } = inspectSplit({ split: "train", file: "data/train.jsonl", text, tokenizer: byteChatTokenizer, maxSeqLength: 160, preview: true });
    assert.deepEqual(report.preview?.lengths, [12, 206, 10]);
    assert.deepEqual(
      report.preview?.rows.map((r) => [r.line, r.tokens, r.truncated]),
      [
        [1, 12, false],
        [3, 206, false],
        [5, 10, false],
      ],
    );
    assert.deepEqual(report.preview?.rows[0].messages, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    assert.deepEqual(report.preview?.issues, [
      { line: 2, message: "not valid JSON" },
      { line: 3, message: "conversation is 206 tokens, longer than the model's context of 160 tokens (1 token = 1 byte)" },
    ]);
    assert.equal(report.preview?.issueCount, 2);
    assert.equal(inspectSplit({ split: "train", file: "t", text, tokenizer: byteChatTokenizer }).report.preview, undefined, "only with preview");
  });

  it("--preview keeps the first rows only, cuts long messages, and counts no lengths without a tokenizer", () => {
    const many = Array.from({ length: PREVIEW_ROWS + 5 }, (_, i) => chat(`q${i}`, i === 0 ? "a".repeat(PREVIEW_CONTENT_CHARS + 10) : "a")).join("\n");
    const { report } = inspectSplit({ split: "eval", file: "e.jsonl", text: many, preview: true });
    assert.equal(report.preview?.lengths, null);
    assert.equal(report.preview?.rows.length, PREVIEW_ROWS);
    assert.equal(report.preview?.rows[0].messages[1].content.length, PREVIEW_CONTENT_CHARS);
    assert.equal(report.preview?.rows[0].truncated, true);
    assert.equal(report.preview?.rows[1].truncated, false);
    assert.equal(report.preview?.rows[0].tokens, null);
  });

  it("without a tokenizer checks the structure only and counts no tokens", () => {
    const { report, rendered } = inspectSplit({ split: "eval", file: "e.jsonl", text });
    assert.equal(report.conversations, 3);
    assert.equal(report.tokens, null);
    assert.equal(report.longest, null);
    assert.deepEqual(report.errors, ["line 2: not valid JSON"]);
    assert.equal(rendered.length, 0);
  });
});

describe("dry run: the step plan", () => {
  it("takes the trainer's step count from epochs, pads each batch to its longest, and counts the evaluations a run reports", () => {
    const plan = planRun({ trainLengths: Array(10).fill(10), evalLengths: [4, 6], batchSize: 4, numTrainEpochs: 2, seed: 1, evalSteps: 2 });
    assert.equal(plan.steps, 5, "ceil(2 × 10 / 4)");
    assert.equal(plan.epochs, 2);
    assert.equal(plan.paddedTokens, 5 * 4 * 9, "inputs are ids[0..n-2]");
    assert.equal(plan.evaluations, 3, "after steps 2 and 4, and at the end (none before step 1: a job reports none there)");
    assert.equal(plan.evalPaddedTokens, 2 * 5);
  });

  it("pads a batch to its longest conversation", () => {
    const plan = planRun({ trainLengths: [3, 30], evalLengths: [], batchSize: 2, maxSteps: 3, seed: 7 });
    assert.equal(plan.paddedTokens, 3 * 2 * 29);
    assert.equal(plan.evaluations, 0, "no eval set, no evaluations");
  });

  it("evaluates in batches of at least 16, in file order", () => {
    assert.deepEqual(
      evalBatches(Array(20).fill(5), 4).map((b) => b.length),
      [16, 4],
    );
    assert.deepEqual(evalBatches(Array(20).fill(5), 32)[0].length, 20);
  });
});

describe("dry run: the report", () => {
  const report: DryRunReport = {
    trainer: "demo",
    model: "svc-tiny",
    tokenizer: "svc-tiny's byte tokenizer (1 token = 1 byte)",
    maxSeqLength: 160,
    splits: [
      { split: "train", file: "data/train.jsonl", conversations: 1200, tokens: 84000, trainedTokens: 20000, longest: { line: 7, tokens: 150 }, errors: [] },
      {
        split: "eval",
        file: "data/eval.jsonl",
        conversations: 20,
        tokens: 1400,
        trainedTokens: 300,
        longest: { line: 2, tokens: 99 },
        errors: ["line 3: not valid JSON"],
      },
    ],
    plan: { steps: 60, batchSize: 8, epochs: 0.4, paddedTokens: 70000, evaluations: 7 },
    estimate: {
      available: true,
      backend: "torch",
      device: "cpu (2 threads)",
      reason: "auto picked torch",
      secondsPerStep: 0.25,
      loadSeconds: 0.4,
      evalSeconds: 3,
      seconds: 18.4,
    },
    ok: false,
  };

  it("reads as lines: splits with their errors, the plan, the time and the verdict", () => {
    assert.deepEqual(dryRunText(report), [
      'dry run of "demo" on svc-tiny: nothing was uploaded and no job was created',
      "tokens counted with svc-tiny's byte tokenizer (1 token = 1 byte); conversations may be up to 160 tokens",
      "train  data/train.jsonl: 1,200 conversations, 84,000 tokens (20,000 trained); longest 150 tokens (line 7) of 160",
      "eval   data/eval.jsonl: 20 conversations, 1,400 tokens (300 trained); longest 99 tokens (line 2) of 160",
      "       line 3: not valid JSON",
      "steps  60 at batch 8 (0.4 epochs), 70,000 tokens with padding, 7 evaluations",
      "time   about 18 s on torch, cpu (2 threads): 0.25 s a step as timed on this machine, evaluations about 3 s, loading about 1 s",
      "       auto picked torch",
      "not ok: fix the lines above before svc start",
    ]);
    assert.ok(isDryRunOutput(`checking…\n${dryRunText(report).join("\n")}`));
    assert.equal(isDryRunOutput("job 1 queued: demo\nstep=1 loss=2.0"), false);
  });

  it("reads as JSON lines, one per split", () => {
    const lines = dryRunJsonLines(report).map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> });
    assert.deepEqual(
      lines.map((l) => l.event),
      ["dryRun.started", "dryRun.split", "dryRun.split", "dryRun.plan", "dryRun.estimate", "dryRun.completed"],
    );
    assert.deepEqual(lines[0].data, { trainer: "demo", model: "svc-tiny", tokenizer: report.tokenizer, maxSeqLength: 160 });
    assert.deepEqual(lines[2].data, report.splits[1]);
    assert.deepEqual(lines[5].data, { ok: false });
  });

  it("reads back from its JSON lines, with anything else printed between them", () => {
    const printed = ["checking…", ...dryRunJsonLines(report), ""]
      .join("\n")
      .replace('{"event":"dryRun.plan"', 'trainer says hi\n{not ours\n{"event":"dryRun.plan"');
    assert.deepEqual(readDryRunJsonLines(printed), report);
    assert.equal(readDryRunJsonLines(dryRunJsonLines(report).slice(0, -1).join("\n")), null, "no verdict: it did not finish");
  });

  it("with a preview, shows the first rows under each split", () => {
    const row = {
      line: 4,
      messages: [
        { role: "user", content: "What is\nup?" },
        { role: "assistant", content: "x".repeat(120) },
      ],
      tokens: 41,
      truncated: false,
    };
    const preview = { lengths: [41], rows: [row], issues: [], issueCount: 0 };
    const text = dryRunText({ ...report, splits: [{ ...report.splits[0], preview }] });
    assert.equal(text[3], `       line 4 (41 tokens): user: What is up? | assistant: ${"x".repeat(99 - "user: What is up? | assistant: ".length)}…`);
  });

  it("says why there is no estimate", () => {
    const text = dryRunText({ ...report, estimate: { available: false, blocking: false, reason: "no file" } });
    assert.ok(text.includes("time   not estimated: no file"));
  });

  it("rounds durations the way people say them", () => {
    assert.deepEqual([0.2, 44.6, 89, 600, 5399, 9000].map(formatDuration), [
      "about 1 s",
      "about 45 s",
      "about 89 s",
      "about 10 min",
      "about 90 min",
      "about 2.5 h",
    ]);
  });
});
