import assert from "node:assert/strict";
import { validateChatJsonl, validateChatJsonlYielding } from "../../../sdk/jsonl.js";

const line = (messages: unknown) => JSON.stringify({ messages });
const ok = line([
  { role: "user", content: "hi" },
  { role: "assistant", content: "hello" },
]);

describe("validateChatJsonl (the report svc start and the cloud show)", () => {
  it("counts valid examples and skips blank lines", () => {
    assert.deepEqual(validateChatJsonl(`${ok}\n\n${ok}\r\n`), { exampleCount: 2, errors: [] });
  });

  it("reports each invalid line with its 1-based line number and reason", () => {
    const text = [
      ok,
      "{not json",
      line([{ role: "user", content: "no answer" }]),
      JSON.stringify({ prompt: "x" }),
      line([{ role: "bot", content: "x" }]),
      line([{ role: "assistant", content: 3 }]),
    ].join("\n");
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
    const long = line([
      { role: "user", content: "x".repeat(300) },
      { role: "assistant", content: "y" },
    ]);
    assert.deepEqual(validateChatJsonl(long).errors, []);
    assert.match(
      validateChatJsonl(long, { contextLength: 160 }).errors[0],
      /^line 1: conversation is \d+ tokens, longer than the model's context of 160 tokens/,
    );
  });

  it("caps the report and says how many more lines are invalid", () => {
    const errors = validateChatJsonl(Array(25).fill("nope").join("\n")).errors;
    assert.equal(errors.length, 21);
    assert.equal(errors[20], "... and 5 more invalid lines");
  });
});

describe("validateChatJsonlYielding (the cloud's upload check)", () => {
  const bad = line([{ role: "user", content: "no answer" }]);
  const mixed = ["\uFEFF" + ok, "", "{not json", ok, bad, "\r", ok, ...Array(30).fill("nope"), ok].join("\n") + "\r\n";

  it("reports exactly what the one-piece check reports, whatever the slice size", async () => {
    const whole = validateChatJsonl(mixed);
    for (const slice of [1, 7, 40, 100, 1 << 20]) assert.deepEqual(await validateChatJsonlYielding(mixed, {}, slice), whole, `slices of ${slice}`);
    assert.deepEqual(await validateChatJsonlYielding("\n\n", {}, 1), validateChatJsonl("\n\n"), "empty");
  });

  it("lets the event loop run between slices", async () => {
    const big = Array(20_000).fill(ok).join("\n");
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      const report = await validateChatJsonlYielding(big, {}, 16 * 1024);
      assert.equal(report.exampleCount, 20_000);
    } finally {
      clearInterval(timer);
    }
    // The one-piece check would hold the loop from start to end: no timer could fire.
    assert.ok(turns > 0, "timers ran during the validation");
  });
});
