/**
 * Base models end to end: a real `svc cloud serve` process, real SQLite (or PostgreSQL with
 * SVC_TEST_DATABASE_URL), small real GGUFs written at test time, and the built CLI.
 * Registration stores the header's facts; bad files are refused with a 400 naming `path` and
 * leave nothing behind; job creation refuses unknown and serve-only models.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { BaseModel } from "../../sdk/wire.js";
import { writeTinyModel, type TinyModel } from "../support/modelFiles.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, type Account } from "../support/api.js";

describe("base models: registration with facts, listing, and the job check", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  /** Every daemon started, so each is stopped; the first one's dispose removes the data. */
  const clouds: TestCloud[] = [];
  let account: Account;
  let workerToken: string;
  let qwen: TinyModel;
  let gemma: TinyModel;
  let unnamed: TinyModel;

  const register = (body: Record<string, unknown>) => http(cloud, "POST", "/v1/models", { token: workerToken, body });
  const list = async () => (await http(cloud, "GET", "/v1/models", { token: account.token })).body as BaseModel[];
  const byName = async (name: string) => (await list()).find((m) => m.name === name);
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cliPath, ...args], {
      encoding: "utf8",
      env: {
        ...process.env,
        SVC_HOME: cloud.home,
        SVC_CLOUD_URL: cloud.cloudUrl,
        HOME: path.join(cloud.home, "user"),
        SVC_MODEL_PATHS: "",
        HF_HOME: "",
        HF_HUB_CACHE: "",
        OLLAMA_MODELS: "",
        ...env,
      },
    });

  before(async () => {
    cloud = await startTestCloud();
    clouds.push(cloud);
    account = await newAccount(cloud);
    workerToken = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    const dir = path.join(cloud.home, "models");
    mkdirSync(dir, { recursive: true });
    qwen = await writeTinyModel(path.join(dir, "Qwen3-0.6B-Q4_K_M.gguf"), {
      architecture: "qwen3",
      name: "Qwen3 0.6B",
      fileType: 15,
      contextLength: 40960,
      chatTemplate: "{{ messages }}",
    });
    gemma = await writeTinyModel(path.join(dir, "gemma.gguf"), { architecture: "gemma2", name: "Gemma 2 2B", fileType: 15 });
    unnamed = await writeTinyModel(path.join(dir, "My Llama (1B).gguf"), { architecture: "llama", fileType: 7 });
  });
  after(async () => {
    for (const c of clouds.reverse()) await c.dispose();
  });

  it("svc-tiny comes with its facts", async () => {
    const tiny = await byName("svc-tiny");
    assert.ok(tiny);
    assert.equal(tiny.source, "gguf");
    assert.equal(tiny.architecture, "llama");
    assert.equal(tiny.contextLength, 160);
    assert.equal(tiny.trainable, true);
    assert.equal(tiny.notTrainableReason, null);
    assert.ok(tiny.parameters! > 100_000 && tiny.parameters! < 10_000_000, `parameters ${tiny.parameters}`);
    assert.equal(tiny.sizeBytes, readFileSync(path.join(cloudRoot(), "models", "svc-tiny.gguf")).length);
  });

  it("registers a GGUF with the facts of its header, named after its general.name", async () => {
    const res = await register({ path: qwen.path });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.name, "qwen3-0.6b");
    const stored = await byName("qwen3-0.6b");
    assert.deepEqual(
      { ...stored, createdAt: undefined },
      {
        name: "qwen3-0.6b",
        source: "gguf",
        trainable: true,
        notTrainableReason: null,
        architecture: "qwen3",
        parameters: qwen.parameters,
        quantization: "Q4_K_M",
        contextLength: 40960,
        sizeBytes: qwen.sizeBytes,
        hasChatTemplate: true,
        createdAt: undefined,
      },
    );
  });

  it("a serve-only architecture is registered with its one-line reason", async () => {
    const res = await register({ path: gemma.path, name: "gemma" });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.trainable, false);
    assert.match(res.body.notTrainableReason, /gemma2/);
    assert.doesNotMatch(res.body.notTrainableReason, /\n/);
  });

  it("a GGUF without general.name is named after its file", async () => {
    const res = await register({ path: unnamed.path });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.name, "my-llama-1b");
    assert.equal(res.body.quantization, "Q8_0");
  });

  it("refuses a file that is not a GGUF, a truncated one and a missing one with a 400 naming path, storing nothing", async () => {
    const before = await list();
    const notGguf = path.join(cloud.home, "notes.gguf");
    writeFileSync(notGguf, "these are my notes, not a model\n");
    const truncated = path.join(cloud.home, "truncated.gguf");
    writeFileSync(truncated, readFileSync(qwen.path).subarray(0, 100));
    for (const file of [notGguf, truncated, path.join(cloud.home, "missing.gguf")]) {
      const res = await register({ path: file, name: "bad-one" });
      assert.equal(res.status, 400, `${file}: ${res.text}`);
      assert.match(res.body.error.message, new RegExp(`^path: ${escapeRegExp(file)} `));
    }
    assert.deepEqual(await list(), before);
  });

  it("a taken name is a 409 unless replace is given; replace swaps the facts in one step", async () => {
    const taken = await register({ path: unnamed.path, name: "qwen3-0.6b" });
    assert.equal(taken.status, 409);
    assert.equal((await byName("qwen3-0.6b"))!.architecture, "qwen3");
    const replaced = await register({ path: unnamed.path, name: "qwen3-0.6b", replace: true });
    assert.equal(replaced.status, 201, replaced.text);
    assert.equal((await byName("qwen3-0.6b"))!.architecture, "llama");
    // A replace with a bad file leaves the old row as it was.
    const bad = await register({ path: path.join(cloud.home, "notes.gguf"), name: "qwen3-0.6b", replace: true });
    assert.equal(bad.status, 400);
    assert.equal((await byName("qwen3-0.6b"))!.architecture, "llama");
    assert.equal((await register({ path: qwen.path, name: "qwen3-0.6b", replace: true })).status, 201);
  });

  describe("job creation checks the model", () => {
    let datasetId: string;
    before(async () => {
      const line = JSON.stringify({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      });
      datasetId = (await account.client.uploadDataset("train.jsonl", `${line}\n`)).id;
    });
    const createJob = (config: Record<string, unknown>) =>
      http(cloud, "POST", "/v1/jobs", {
        token: account.token,
        body: { projectId: account.projectId, name: "run", config: { maxSteps: 1, ...config }, datasetId },
      });

    it("an unknown model: 400 naming model and listing the trainable ones", async () => {
      const res = await createJob({ model: "llama-70b" });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, "unknown_model");
      const listed = /^config\.model: unknown model "llama-70b"; trainable models registered: (.*)$/.exec(res.body.error.message);
      assert.ok(listed, res.body.error.message);
      assert.deepEqual(listed[1].split(", ").sort(), ["my-llama-1b", "qwen3-0.6b", "svc-tiny"], "the trainable ones, not gemma");
    });

    it("a serve-only model: 400 with the reason", async () => {
      const res = await createJob({ model: "gemma" });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, "model_not_trainable");
      assert.match(res.body.error.message, /^config\.model: "gemma" can be served but not trained: .*gemma2/);
    });

    it("maxSeqLength out of range or past the context: 400", async () => {
      assert.match((await createJob({ model: "svc-tiny", maxSeqLength: 8 })).body.error.message, /^config\.maxSeqLength: must be an integer from 16 to 32768$/);
      assert.match((await createJob({ model: "svc-tiny", maxSeqLength: 161 })).body.error.message, /context of "svc-tiny" \(160 tokens\)/);
    });

    it("a registered trainable model with maxSeqLength queues the job with it", async () => {
      const res = await createJob({ model: "qwen3-0.6b", maxSeqLength: 512 });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.config.maxSeqLength, 512);
      assert.equal(res.body.status, "queued");
    });
  });

  describe("the CLI", () => {
    it("svc models list prints a table with the facts and the serve-only reasons", () => {
      const out = cli(["models", "list"]);
      assert.equal(out.status, 0, out.stderr);
      const lines = out.stdout.split("\n");
      assert.match(lines[0], /^NAME\s+ARCHITECTURE\s+PARAMETERS\s+QUANTIZATION\s+CONTEXT\s+TRAINING$/);
      assert.match(out.stdout, /^svc-tiny\s+llama\s+\S+K\s+F32\s+160\s+trainable$/m);
      assert.match(out.stdout, /^qwen3-0\.6b\s+qwen3\s+\S+\s+Q4_K_M\s+40960\s+trainable$/m);
      assert.match(out.stdout, /^gemma\s+gemma2\s+\S+\s+Q4_K_M\s+\d+\s+serve only$/m);
      assert.match(out.stdout, /\nserve only:\n {2}gemma: .*gemma2/);
      const json = JSON.parse(cli(["models", "list", "--json"]).stdout) as BaseModel[];
      assert.deepEqual(
        json,
        json.filter((m) => typeof m.trainable === "boolean"),
      );
      assert.ok(json.some((m) => m.name === "qwen3-0.6b" && m.quantization === "Q4_K_M"));
    });

    it("svc models add FILE prints what it registered; a bad file is the cloud's 400 message", () => {
      const added = cli(["models", "add", unnamed.path, "--name", "cli-llama", "--data", cloud.dataDir]);
      assert.equal(added.status, 0, added.stderr);
      assert.match(added.stdout, /^registered cli-llama: llama · \S+ · Q8_0 · ctx 64 · trainable$/m);
      const bad = cli(["models", "add", path.join(cloud.home, "notes.gguf"), "--data", cloud.dataDir]);
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /^svc: path: .*notes\.gguf is not a usable GGUF file/);
      const missing = cli(["models", "add", "./nowhere/model.gguf", "--data", cloud.dataDir]);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /^svc: no such file: .*nowhere\/model\.gguf/);
    });

    it("svc models discover lists, and svc models add takes a discovered name", async () => {
      const ollama = path.join(cloud.home, "ollama");
      mkdirSync(path.join(ollama, "blobs"), { recursive: true });
      const blob = await writeTinyModel(path.join(ollama, "blobs", `sha256-${"a".repeat(64)}`), { architecture: "qwen3", name: "Qwen3 0.6B", fileType: 15 });
      mkdirSync(path.join(ollama, "manifests/registry.ollama.ai/library/qwen3"), { recursive: true });
      writeFileSync(
        path.join(ollama, "manifests/registry.ollama.ai/library/qwen3/0.6b"),
        JSON.stringify({
          schemaVersion: 2,
          layers: [{ mediaType: "application/vnd.ollama.image.model", digest: `sha256:${"a".repeat(64)}`, size: blob.sizeBytes }],
        }),
      );
      const env = { OLLAMA_MODELS: ollama, SVC_MODEL_PATHS: path.join(cloud.home, "models") };
      const discovered = cli(["models", "discover"], env);
      assert.equal(discovered.status, 0, discovered.stderr);
      assert.match(discovered.stdout, /^NAME\s+ARCHITECTURE\s+PARAMETERS\s+QUANTIZATION\s+CONTEXT\s+SIZE\s+TRAINING\s+FOUND IN\s+PATH$/m);
      assert.match(discovered.stdout, /^qwen3:0\.6b\s+qwen3\s+.*trainable\s+ollama\s+\S+sha256-a{64}$/m);
      assert.match(discovered.stdout, /^gemma\s+gemma2\s+.*serve only\s+SVC_MODEL_PATHS\s+/m);
      const json = JSON.parse(cli(["models", "discover", "--json"], env).stdout);
      assert.deepEqual(json.models.map((m: { name: string }) => m.name).sort(), ["My-Llama-1B", "Qwen3-0.6B-Q4_K_M", "gemma", "qwen3:0.6b"].sort());

      const added = cli(["models", "add", "qwen3:0.6b", "--data", cloud.dataDir], env);
      assert.equal(added.status, 0, added.stderr);
      assert.match(added.stdout, /^registered qwen3:0\.6b: qwen3 · /);
      assert.equal((await byName("qwen3:0.6b"))!.architecture, "qwen3");
      const unknown = cli(["models", "add", "nothing-like-this", "--data", cloud.dataDir], env);
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /"nothing-like-this" is neither a file nor a model that svc models discover lists \(it lists: .*qwen3:0\.6b/);
    });
  });

  // Last (mocha runs a describe's own tests before its nested ones): the restart moves the ports.
  describe("afterwards", () => {
    it("the facts survive a restart of the cloud", async () => {
      await cloud.stop();
      cloud = await cloud.restart();
      clouds.push(cloud);
      const stored = await byName("qwen3-0.6b");
      assert.equal(stored!.parameters, qwen.parameters);
      assert.equal(stored!.contextLength, 40960);
      assert.equal((await byName("gemma"))!.trainable, false);
    });
  });
});

function cloudRoot(): string {
  return path.resolve(import.meta.dirname, "../..");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
