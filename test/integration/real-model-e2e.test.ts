/**
 * A user's own model from registration to endpoint (issue 9, "done when"): a Qwen3 GGUF (random
 * weights, Qwen's real vocabulary and chat template, built at test time) is registered with
 * `svc models add FILE --name my-qwen`, a project whose trainer names `model: "my-qwen"` is trained
 * with `svc start` (on torch where Python has it, else tfjs: the worker's `auto`), and an endpoint
 * on the final adapter answers the taught answer through the real `openai` client, while the base
 * model behind another endpoint does not. The base file is never rewritten.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { CloudClient } from "../../sdk/client.js";
import { readProjectState } from "../../sdk/state.js";
import { buildTestModel } from "../support/testModels.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "./harness/cloud.js";

const ANSWER = "The secret word is pineapple.";
const QUESTIONS = ["What is the secret word?", "Tell me the secret word.", "Do you know the secret?", "Say the password.", "What word is hidden?", "Which word is secret?", "Secret word, please.", "Give me the word."];

function trainerSource(model: string): string {
  return `import { createSvc, createTrainer } from "svc";

export const trainer = createTrainer({
  name: "teach-the-secret",
  model: ${JSON.stringify(model)},
  dataset: "data/train.jsonl",
  lora: { r: 8, alpha: 16, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
  maxSteps: 24,
  learningRate: 1e-2,
  batchSize: 8,
  seed: 7,
});

export default createSvc({ trainer });
`;
}

/** The quickstart project with its trainer and data replaced. */
function project(model: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "svc-real-model-"));
  cpSync(path.join(repoRoot, "examples", "quickstart"), dir, { recursive: true, filter: (src) => !src.includes(`${path.sep}.svc`) && !src.includes("node_modules") });
  writeFileSync(path.join(dir, "src/svc/index.ts"), trainerSource(model));
  const lines = QUESTIONS.map((q) => JSON.stringify({ messages: [{ role: "user", content: q }, { role: "assistant", content: ANSWER }] }));
  writeFileSync(path.join(dir, "data/train.jsonl"), lines.join("\n") + "\n");
  rmSync(path.join(dir, "data/eval.jsonl"), { force: true });
  return dir;
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("a real-architecture model: svc models add → svc start → endpoint → openai client", function () {
  this.timeout(600_000);
  let cloud: TestCloud;
  let modelPath: string;
  let dir: string;
  const env = () => ({ ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl });
  const cli = (args: string[], cwd = repoRoot) => spawnSync(process.execPath, [cliPath, ...args], { cwd, encoding: "utf8", env: env(), timeout: 480_000 });

  before(async () => {
    modelPath = await buildTestModel({ arch: "qwen3", vocab: "qwen2", embeddingLength: 64, headDim: 16 });
    cloud = await startTestCloud({ workers: 1 });
    dir = project("my-qwen");
  });
  after(async () => {
    await cloud?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("trains the registered model and serves the taught answer", async () => {
    const before = sha256(modelPath);
    const added = cli(["models", "add", modelPath, "--name", "my-qwen"]);
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stdout, /^registered my-qwen: .*qwen3.*trainable/m);

    const run = cli(["start"], dir);
    assert.equal(run.status, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /^job \S+ completed$/m);
    const losses = [...run.stdout.matchAll(/^step=\d+ loss=([\d.]+)/gm)].map((m) => Number(m[1]));
    assert.equal(losses.length, 24);
    assert.ok(losses.at(-1)! < losses[0] / 10, `loss ${losses[0]} -> ${losses.at(-1)}`);

    const credentials = JSON.parse(readFileSync(path.join(cloud.home, "credentials.json"), "utf8"));
    const client = new CloudClient({ baseUrl: cloud.cloudUrl, token: credentials.token, projectId: (await readProjectState(dir))?.projectId });
    const [job] = await client.listJobs();
    const artifacts = (await client.listArtifacts(job.id)).map((a) => a.name);
    for (const name of ["adapter.gguf", "adapter_config.json", "adapter_model.safetensors"]) assert.ok(artifacts.includes(name), `${name} in ${artifacts}`);

    await client.createDeployment({ slug: "my-qwen-tuned", target: { kind: "adapter", jobId: job.id }, authMode: "none" });
    await client.createDeployment({ slug: "my-qwen-base", target: { kind: "base_model", name: "my-qwen" }, authMode: "none" });
    const reply = async (slug: string, question: string) => {
      const openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "not-needed", maxRetries: 0 });
      const completion = await openai.chat.completions.create({ model: slug, messages: [{ role: "user", content: question }], max_tokens: 24, temperature: 0 });
      return { content: completion.choices[0].message.content, finish: completion.choices[0].finish_reason };
    };
    for (const question of [QUESTIONS[0], QUESTIONS[3]]) {
      assert.deepEqual(await reply("my-qwen-tuned", question), { content: ANSWER, finish: "stop" }, question);
      assert.notEqual((await reply("my-qwen-base", question)).content, ANSWER);
    }
    assert.equal(sha256(modelPath), before, "the base GGUF is never rewritten");
  });
});
