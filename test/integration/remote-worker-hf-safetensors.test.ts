/**
 * A worker on another machine trains a Hugging Face model from its safetensors: a real `svc worker`
 * (torch, not one of the cloud's own, with a cache folder of its own) is assigned a model added
 * from a folder, fetches the folder's files from the cloud by sha256 into its cache, trains from
 * them (the job's log says so), and the next job reuses the copy without asking the cloud for a
 * byte. A file changed on the cloud after it was hashed fails its check on a fresh worker, in one
 * readable line, which then trains the converted GGUF and keeps nothing half-written. The route
 * serves only the listed names, to the worker token.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import path from "node:path";
import type { JobEvent } from "../../sdk/wire.js";
import { buildHfFolder, TINY_HF_LLAMA } from "../support/hfTestModels.js";
import { requireTorchStack } from "../support/torchStack.js";
import { cliPath, startTestCloud, startWorkerProcess, workerToken, type TestCloud } from "../support/cloud.js";
import { http, newAccount, trainToEnd, uploadQuickstartData, type Account } from "../support/api.js";
import { createTempDir, type TempDir } from "../support/tmp.js";

const MODEL = "tiny-llama-hf";
const FILE_TIME = new Date("2026-01-02T03:04:05Z");
const hostAndPort = (url: string) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) });
const sha256Of = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("remote worker: a Hugging Face model trains from its safetensors, fetched by sha256", function () {
  this.timeout(600_000);
  let cloud: TestCloud;
  let folder: string;
  let account: Account;
  let data: { datasetId: string };
  const workDirs: TempDir[] = [];
  const workers: ChildProcess[] = [];
  /** The files the cloud sent from the folder so far, by its log. */
  const sent = () => [...cloud.stderr().matchAll(/sending (\S+) of the Hugging Face folder of tiny-llama-hf to a worker/g)].map((m) => m[1]);

  before(async function () {
    await requireTorchStack(this);
    cloud = await startTestCloud({ workers: 0 });
    // A copy of its own: this test changes a file of it.
    folder = path.join(cloud.home, "tiny-llama");
    cpSync(await buildHfFolder(TINY_HF_LLAMA), folder, { recursive: true });
    writeFileSync(path.join(folder, "README.md"), "# not shipped");
    // Whole seconds, so the tampering below can put the very same time back.
    for (const name of readdirSync(folder)) utimesSync(path.join(folder, name), FILE_TIME, FILE_TIME);
    const added = spawnSync(process.execPath, [cliPath, "models", "add", folder, "--name", MODEL], {
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl },
      timeout: 480_000,
    });
    assert.equal(added.status, 0, added.stderr);
    account = await newAccount(cloud);
    data = await uploadQuickstartData(account.client, false);
  });
  after(async () => {
    for (const worker of workers) worker.kill("SIGKILL");
    await cloud?.dispose();
    for (const dir of workDirs) await dir.remove();
  });

  async function startRemoteWorker(name: string) {
    const workDir = await createTempDir(`hf-remote-${name}`);
    workDirs.push(workDir);
    const worker = startWorkerProcess(cloud, { name, workDir: workDir.path, backend: "torch" });
    workers.push(worker);
    return { worker, cache: path.join(workDir.path, "svc-models") };
  }

  async function train(name: string, log: () => string): Promise<string[]> {
    const config = { model: MODEL, maxSteps: 1, learningRate: 1e-3, batchSize: 2, seed: 3 };
    const { events } = await trainToEnd(account.client, { name, ...data, config }, log);
    return events.filter((e: JobEvent) => e.type === "training.progress").map((e) => String(e.data.message));
  }

  it("serves a listed file to the worker token only, and refuses other names and paths", async () => {
    const token = workerToken(cloud);
    const base = `/v1/worker/models/${MODEL}/hf/`;
    const config = await http(cloud, "GET", `${base}config.json`, { token });
    assert.equal(config.status, 200);
    assert.equal(config.text, readFileSync(path.join(folder, "config.json"), "utf8"));
    assert.equal((await http(cloud, "GET", `${base}config.json`)).status, 401);
    assert.equal((await http(cloud, "GET", `${base}config.json`, { token: account.token })).status, 403);
    // Encoded separators: a client resolves a bare (or encoded) `..` segment before sending it.
    for (const name of ["..%2Fconfig.json", "%2Fetc%2Fpasswd", "sub%5Cconfig.json", ".hidden"]) {
      const res = await http(cloud, "GET", `${base}${name}`, { token });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.match(res.body.error.message, /^file: /);
    }
    // A bare `..` as sent by a client that does not resolve it.
    const raw = await new Promise<number | undefined>((resolve, reject) =>
      httpGet({ ...hostAndPort(cloud.cloudUrl), path: `${base}..`, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on("error", reject),
    );
    assert.equal(raw, 400);
    assert.equal((await http(cloud, "GET", `${base}README.md`, { token })).status, 404, "a file the list leaves out is not served");
    assert.equal((await http(cloud, "GET", `/v1/worker/models/no-such-model/hf/config.json`, { token })).status, 404);
  });

  it("fetches the folder once, verified, trains from it, and the next job reuses the copy", async () => {
    const { worker, cache } = await startRemoteWorker("remote-a");
    const before = sent().length;
    const first = await train("hf-first", worker.log);
    const fetched = first.find((m) => m.startsWith(`training from the Hugging Face safetensors of ${MODEL}, fetched by sha256 (`));
    assert.ok(fetched, first.join("\n"));
    const copies = readdirSync(cache).filter((name) => name.startsWith("hf-"));
    assert.equal(copies.length, 1, readdirSync(cache).join(", "));
    assert.match(copies[0], /^hf-[0-9a-f]{64}$/);
    const copy = path.join(cache, copies[0]);
    assert.ok(fetched.endsWith(`in ${copy})`), fetched);
    assert.ok(first.includes(`base model weights read from the Hugging Face safetensors in ${copy}`), first.join("\n"));
    assert.ok(!readdirSync(cache).some((name) => name.includes(".part")), "no partial download left");

    // The copy holds what transformers loads, each file the cloud's to the byte; the rest stays behind.
    const shipped = readdirSync(copy).sort();
    assert.ok(shipped.includes("config.json") && shipped.includes("model.safetensors") && shipped.includes("tokenizer.json"), shipped.join(", "));
    assert.ok(!shipped.includes("README.md"));
    for (const name of shipped) assert.equal(sha256Of(path.join(copy, name)), sha256Of(path.join(folder, name)), name);
    assert.deepEqual(sent().slice(before).sort(), shipped, "each file sent once");

    const mtimes = shipped.map((name) => statSync(path.join(copy, name)).mtimeMs);
    const second = await train("hf-second", worker.log);
    assert.ok(
      second.includes(`training from the Hugging Face safetensors of ${MODEL}, fetched by sha256 for an earlier job (${shipped.length} files in ${copy})`),
      second.join("\n"),
    );
    assert.ok(second.includes(`base model weights read from the Hugging Face safetensors in ${copy}`), second.join("\n"));
    assert.deepEqual(sent().slice(before).sort(), shipped, "the second job asked the cloud for nothing");
    assert.deepEqual(
      shipped.map((name) => statSync(path.join(copy, name)).mtimeMs),
      mtimes,
      "the copy's files were not written again",
    );
  });

  it("a file changed on the cloud after it was hashed fails its check readably; the job trains the GGUF and keeps no partial copy", async () => {
    // Other bytes at the same size and time: the cloud still lists the sha256 it computed before.
    const weights = path.join(folder, "model.safetensors");
    const bytes = readFileSync(weights);
    bytes[bytes.length - 1] ^= 0xff;
    writeFileSync(weights, bytes);
    utimesSync(weights, FILE_TIME, FILE_TIME);
    assert.equal(statSync(weights).mtimeMs, FILE_TIME.getTime());

    const { worker, cache } = await startRemoteWorker("remote-b");
    const messages = await train("hf-tampered", worker.log);
    const mismatch = messages.find((m) => m.startsWith(`model.safetensors of the Hugging Face model ${MODEL} does not have the sha256 the cloud listed`));
    assert.ok(mismatch, messages.join("\n"));
    assert.match(mismatch, /\(got [0-9a-f]{64}, expected [0-9a-f]{64}\): training tiny-llama-hf from its converted GGUF instead$/);
    assert.ok(!messages.some((m) => m.includes("read from the Hugging Face safetensors")), messages.join("\n"));
    assert.deepEqual(
      readdirSync(cache).filter((name) => !/^[0-9a-f]{64}\.gguf$/.test(name)),
      [],
      "nothing of the folder is left in the cache: no copy, no partial one",
    );
  });
});
