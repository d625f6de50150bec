import assert from "node:assert/strict";
import { validateChatJsonl } from "../../../sdk/jsonl.js";

const line = (messages: unknown) => JSON.stringify({ messages });
const ok = line([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);

describe("validateChatJsonl (the report svc start and the cloud show)", () => {
  it("counts valid examples and skips blank lines", () => {
    assert.deepEqual(validateChatJsonl(`${ok}\n\n${ok}\r\n`), { exampleCount: 2, errors: [] });
  });

  it("reports each invalid line with its 1-based line number and reason", () => {
    const text = [ok, "{not json", line([{ role: "user", content: "no answer" }]), JSON.stringify({ prompt: "x" }), line([{ role: "bot", content: "x" }]), line([{ role: "assistant", content: 3 }])].join("\n");
    const errors = validateChatJsonl(text).errors;
    assert.equal(errors.length, 5);
    assert.deepEqual(
      errors.map((e) => e.split(":")[0]),
      ["line 2", "line 3", "line 4", "line 5", "line 6"],
    );
    assert.equal(errors[0], "line 2: not valid JSON");
    assert.match(errors[1], /assistant message/);
    assert.match(errors[2], /messages/);
    assert.match(errors[3], /role must be "system", "user" or "assistant"/);
    assert.match(errors[4], /content must be a string/);
  });

  it("calls an empty dataset an error", () => {
    assert.deepEqual(validateChatJsonl("\n  \n").errors, ["dataset is empty: no examples found"]);
  });

  it("rejects conversations longer than the context when one is given", () => {
    const long = line([{ role: "user", content: "x".repeat(300) }, { role: "assistant", content: "y" }]);
    assert.deepEqual(validateChatJsonl(long).errors, []);
    assert.match(validateChatJsonl(long, { contextLength: 160 }).errors[0], /^line 1: conversation is \d+ tokens, longer than the model's context of 160 tokens/);
  });

  it("caps the report and says how many more lines are invalid", () => {
    const errors = validateChatJsonl(Array(25).fill("nope").join("\n")).errors;
    assert.equal(errors.length, 21);
    assert.equal(errors[20], "... and 5 more invalid lines");
  });
});
