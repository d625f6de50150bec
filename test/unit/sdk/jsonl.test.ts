import assert from "node:assert/strict";
import { validateChatJsonl } from "../../../sdk/jsonl.js";

const line = (messages: unknown) => JSON.stringify({ messages });
const ok = line([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);

describe("validateChatJsonl", () => {
  it("counts valid examples and skips blank lines", () => {
    assert.deepEqual(validateChatJsonl(`${ok}\n\n${ok}\r\n`), { exampleCount: 2, errors: [] });
  });

  it("reports each invalid line with its 1-based line number and reason", () => {
    const text = [ok, "{not json", line([{ role: "user", content: "no answer" }]), JSON.stringify({ prompt: "x" }), line([{ role: "bot", content: "x" }]), line([{ role: "assistant", content: 3 }])].join("\n");
    assert.deepEqual(validateChatJsonl(text).errors, [
      "line 2: not valid JSON",
      "line 3: messages must contain an assistant message to learn from",
      "line 4: messages must be a non-empty array",
      'line 5: messages[0].role must be "system", "user" or "assistant"',
      "line 6: messages[0].content must be a string",
    ]);
  });

  it("calls an empty dataset an error", () => {
    assert.deepEqual(validateChatJsonl("\n  \n").errors, ["the dataset is empty: it needs at least one example line"]);
  });

  it("caps the report and says how many more lines are invalid", () => {
    const errors = validateChatJsonl(Array(25).fill("nope").join("\n")).errors;
    assert.equal(errors.length, 21);
    assert.equal(errors[20], "... and 5 more invalid lines");
  });
});
