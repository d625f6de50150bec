/** Dataset problems as the Problems panel shows them, without VS Code. */
import assert from "node:assert/strict";
import { datasetFiles, datasetProblems, lengthLimit, MAX_PROBLEMS_PER_FILE } from "../../../extension/core/datasetProblems.js";
import { validateChatJsonl } from "../../../sdk/jsonl.js";

const chat = (user: string, assistant: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: assistant },
    ],
  });

describe("extension/core/datasetProblems", () => {
  it("marks each invalid line (0-based, the whole line) with the SDK check's own message", () => {
    const text = [chat("hi", "hello"), "{oops", "", JSON.stringify({ messages: [{ role: "user", content: "q" }] }), chat("x".repeat(200), "y")].join("\n");
    const problems = datasetProblems(text, 160);
    assert.deepEqual(
      problems.map((p) => [p.line, p.endColumn]),
      [
        [1, 5],
        [3, text.split("\n")[3].length],
        [4, text.split("\n")[4].length],
      ],
    );
    // The same words svc start prints, line for line (one check, not a second one).
    assert.deepEqual(
      problems.map((p) => `line ${p.line + 1}: ${p.message}`),
      validateChatJsonl(text, { contextLength: 160 }).errors,
    );
    assert.deepEqual(
      datasetProblems(text).map((p) => p.line),
      [1, 3],
      "no length check without a limit",
    );
  });

  it("an empty file is one problem on its first line; a valid one has none", () => {
    assert.deepEqual(datasetProblems("\n\n"), [{ line: 0, endColumn: 1, message: "dataset is empty: no examples found" }]);
    assert.deepEqual(datasetProblems(`${chat("a", "b")}\r\n`), []);
  });

  it("caps a file's problems and says how many more there are", () => {
    const problems = datasetProblems(
      Array(MAX_PROBLEMS_PER_FILE + 7)
        .fill("nope")
        .join("\n"),
    );
    assert.equal(problems.length, MAX_PROBLEMS_PER_FILE);
    assert.match(problems.at(-1)!.message, /\(and 7 more invalid lines after this one\)$/);
  });

  it("takes the files and the byte limit from an ok manifest only", () => {
    const manifest = { status: "ok" as const, trainer: { name: "t", datasets: ["data/train.jsonl", "data/eval.jsonl"], byteTokenLimit: 160 } };
    assert.deepEqual(datasetFiles(manifest), ["data/train.jsonl", "data/eval.jsonl"]);
    assert.equal(lengthLimit(manifest), 160);
    assert.deepEqual(datasetFiles({ status: "error", error: "x" }), []);
    assert.deepEqual(datasetFiles(undefined), []);
    assert.equal(lengthLimit({ status: "ok", trainer: { name: "t" } }), undefined);
  });
});
