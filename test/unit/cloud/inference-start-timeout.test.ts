/**
 * The inference child's start is bounded: a child that never says "ready" is killed after the
 * start timeout, and the start and the requests waiting on it fail with a readable 503 instead of
 * waiting forever. The hang is a named test double (test/fixtures/cloud/hangingInferenceStartForTest.mjs)
 * loaded into the real child through NODE_OPTIONS.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { InferenceError } from "../../../cloud/inference/types.js";
import { InferenceWorkerProcess } from "../../../cloud/inference/workerProcess.js";
import { pollUntil } from "../../support/poll.js";

const hangingStart = path.resolve(import.meta.dirname, "../../fixtures/cloud/hangingInferenceStartForTest.mjs");
const settings = { threads: 1, maxModelBytes: 1 << 30, maxContexts: 2, contextsPerModel: 1 };

describe("inference child: a start that never answers", function () {
  this.timeout(60_000);
  let savedNodeOptions: string | undefined;
  let worker: InferenceWorkerProcess | undefined;

  beforeEach(() => {
    savedNodeOptions = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${savedNodeOptions ?? ""} --import=${pathToFileURL(hangingStart).href}`.trim();
  });
  afterEach(async () => {
    await worker?.close();
    if (savedNodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = savedNodeOptions;
  });

  it("fails the start and the waiting request with a readable 503 after the timeout, and kills the child", async () => {
    const logs: string[] = [];
    worker = new InferenceWorkerProcess(settings, (line) => logs.push(line), 1500);
    const began = Date.now();
    const starting = worker.start();
    const waiting = worker.generate("/nowhere/model.gguf", null, { messages: [{ role: "user", content: "hi" }], maxTokens: 1 });
    const readable = (err: unknown) => {
      assert.ok(err instanceof InferenceError, `expected an InferenceError, got ${err}`);
      assert.equal(err.status, 503);
      assert.equal(err.code, "inference_unavailable");
      assert.match(err.message, /the inference worker did not start within 1\.5 s; it is being restarted, retry the request/);
      return true;
    };
    await assert.rejects(starting, readable);
    const hungPid = worker.pid;
    await assert.rejects(
      (async () => {
        for await (const _event of waiting) assert.fail("no event can come from a child that never started");
      })(),
      readable,
    );
    const waited = Date.now() - began;
    assert.ok(waited >= 1400 && waited < 15_000, `failed after ${waited} ms`);
    assert.ok(
      logs.some((line) => /did not start within 1\.5 s; killing it/.test(line)),
      logs.join("\n"),
    );
    assert.ok(hungPid, "a child was started");
    await pollUntil(() => !isAlive(hungPid), { timeoutMs: 10_000, description: "the hung child to be killed" });
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
