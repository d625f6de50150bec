/**
 * A worker knows its base by content: a real `svc worker` (not one of the cloud's own, so it
 * downloads base models) trains a job on a model, the model is replaced (`registerModel` with
 * `replace`) by a file with other weights, and the next job trains the new file: the worker
 * reports the new content's sha256, the first loss moves with the weights, and its cache holds
 * each version under the sha256 of its bytes, with no `:` of the model's name in a file name.
 * (The worker cached `<name>.gguf` forever and trained the old file.)
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { readGgufFile } from "../../engine/gguf/reader.js";
import { writeGgufFile } from "../../engine/gguf/writer.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { repoRoot, startTestCloud, startWorkerProcess, workerToken, type TestCloud } from "../support/cloud.js";
import { http, newAccount, trainToEnd, uploadQuickstartData } from "../support/api.js";

const MODEL = "team:base";
const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("remote worker: a replaced base model is trained as its new content", function () {
  this.timeout(240_000);
  let cloud: TestCloud;
  let workDir: TempDir;
  let worker: ChildProcess | undefined;
  before(async () => {
    cloud = await startTestCloud();
    workDir = await createTempDir("base-replaced");
  });
  after(async () => {
    worker?.kill("SIGKILL");
    await cloud?.dispose();
    await workDir?.remove();
  });

  it("trains the new file after a replace, cached by sha256", async () => {
    const token = workerToken(cloud);
    const v1 = path.join(cloud.home, "base-v1.gguf");
    copyFileSync(path.join(repoRoot, "models/svc-tiny.gguf"), v1);
    // The same model with other weights: another file, another sha256, another first loss.
    const v2 = path.join(cloud.home, "base-v2.gguf");
    const gguf = await readGgufFile(v1);
    const embedding = gguf.tensors.find((t) => t.name === "token_embd.weight")!;
    for (let i = 0; i < embedding.data.length; i++) embedding.data[i] *= 3;
    await writeGgufFile(v2, gguf);
    assert.notEqual(sha256Of(v1), sha256Of(v2));

    const registered = await http(cloud, "POST", "/v1/models", { token, body: { name: MODEL, path: v1 } });
    assert.equal(registered.status, 201, registered.text);

    const remote = startWorkerProcess(cloud, { name: "remote", workDir: workDir.path });
    worker = remote;

    const account = await newAccount(cloud);
    const data = await uploadQuickstartData(account.client, false);
    const runJob = async (name: string) => {
      const config = { model: MODEL, maxSteps: 2, learningRate: 3e-3, batchSize: 4, seed: 11 };
      const { events } = await trainToEnd(account.client, { name, ...data, config }, remote.log);
      const started = events.find((e) => e.type === "training.started")!;
      const firstLog = events.find((e) => e.type === "training.log")!;
      return { baseSha256: started.data.baseSha256, loss: firstLog.data.loss as number };
    };

    const before = await runJob("on-v1");
    assert.equal(before.baseSha256, sha256Of(v1));

    const replaced = await http(cloud, "POST", "/v1/models", { token, body: { name: MODEL, path: v2, replace: true } });
    assert.ok(replaced.status === 200 || replaced.status === 201, replaced.text);

    const after = await runJob("on-v2");
    assert.equal(after.baseSha256, sha256Of(v2), "the worker trained the replaced model's new content");
    assert.notEqual(after.loss, before.loss, "the new weights give another first loss");

    const cached = readdirSync(path.join(workDir.path, "svc-models")).sort();
    assert.deepEqual(cached, [`${sha256Of(v1)}.gguf`, `${sha256Of(v2)}.gguf`].sort(), "one copy per content, named by its sha256");
    for (const name of cached) {
      assert.match(name, /^[0-9a-f]{64}\.gguf$/, "a file name safe on every OS");
      assert.equal(sha256Of(path.join(workDir.path, "svc-models", name)), name.replace(/\.gguf$/, ""), "each copy is what its name says");
    }
  });
});
