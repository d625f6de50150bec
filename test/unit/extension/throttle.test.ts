import assert from "node:assert/strict";
import { throttle } from "../../../extension/core/throttle.js";
import { pollUntil } from "../../support/poll.js";

describe("extension/core/throttle", () => {
  it("runs the first call at once and folds a burst into one trailing call", async () => {
    let calls = 0;
    const update = throttle(() => calls++, 50);
    for (let i = 0; i < 100; i++) update();
    assert.equal(calls, 1, "the first call runs at once, the burst waits");
    await pollUntil(() => (calls === 2 ? true : undefined), { timeoutMs: 5000, description: "the trailing call" });
    update();
    update();
    await pollUntil(() => (calls === 3 ? true : undefined), { timeoutMs: 5000, description: "the next burst's one call" });
  });
});
