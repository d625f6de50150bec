import assert from "node:assert/strict";
import { isTransientStatus, TransferRefused, transferDelayMs, withTransferRetries } from "../../../cloud/workers/transferRetry.js";

/**
 * The worker's retry policy for uploads and downloads: jittered exponential delays with a cap, a bounded number of
 * attempts, and no retry of a refusal. The waits are recorded instead of slept.
 */
describe("worker transfer retries", () => {
  it("delays grow from half a second, double, stay under the cap, and are jittered within each step", () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((n) => transferDelayMs(n, () => 1)),
      [500, 1000, 2000, 4000],
    );
    assert.deepEqual(
      [0, 1, 2, 3].map((n) => transferDelayMs(n, () => 0)),
      [250, 500, 1000, 2000],
    );
    assert.equal(
      transferDelayMs(40, () => 1),
      15_000,
    );
    assert.equal(
      transferDelayMs(40, () => 0),
      7_500,
    );
  });

  it("retries what may pass (network, 5xx, 408, 429), not a refusal (other 4xx)", () => {
    assert.deepEqual([500, 502, 507, 408, 429].map(isTransientStatus), [true, true, true, true, true]);
    assert.deepEqual([400, 401, 404, 409, 413].map(isTransientStatus), [false, false, false, false, false]);
  });

  it("gives up after the bounded number of attempts with the last error, and waits between them", async () => {
    const waits: number[] = [];
    let calls = 0;
    await assert.rejects(
      withTransferRetries(
        async () => {
          calls += 1;
          throw new Error(`blip ${calls}`);
        },
        { attempts: 4, delay: async (ms) => void waits.push(ms) },
      ),
      /^Error: blip 4$/,
    );
    assert.equal(calls, 4);
    assert.equal(waits.length, 3);
    waits.forEach((ms, i) => assert.ok(ms >= 250 * 2 ** i && ms <= 500 * 2 ** i, `wait ${i}: ${ms} ms`));
  });

  it("stops at a refusal without retrying, and returns the first success", async () => {
    let calls = 0;
    await assert.rejects(
      withTransferRetries(
        async () => {
          calls += 1;
          throw new TransferRefused("job ended", 409, "job_ended");
        },
        { delay: async () => {} },
      ),
      TransferRefused,
    );
    assert.equal(calls, 1);
    let tries = 0;
    assert.equal(await withTransferRetries(async () => (++tries < 3 ? Promise.reject(new Error("blip")) : "stored"), { delay: async () => {} }), "stored");
    assert.equal(tries, 3);
  });
});
