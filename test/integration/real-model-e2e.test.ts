/**
 * A user's own model from registration to endpoint (issue 9, "done when"; issue 25 for the Hugging
 * Face folder): a Qwen3 model (random weights, Qwen's real vocabulary and chat template, built at
 * test time) is registered with `svc models add` — as a GGUF, and as a Hugging Face folder that
 * llama.cpp's converter turns into one — a project whose trainer names it is trained with
 * `svc start` (the worker's `auto`: torch where svc's venv is), and an endpoint on the final
 * adapter answers the taught answer through the real `openai` client, while the base model behind
 * another endpoint does not. The folder's job trains from its own safetensors (its log says so) and
 * its adapter serves on the converted GGUF. The registered files are never rewritten.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { CloudClient } from "../../sdk/client.js";
import { readProjectState } from "../../sdk/state.js";
import { buildHfFolder, buildHfTestGguf } from "../support/hfTestModels.js";
import { buildTestModel } from "../support/testModels.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "../support/cloud.js";
import { SECRET_ANSWER, SECRET_QUESTIONS, writeSecretWordData } from "../support/secretWord.js";

function trainerSource(model: string): string {
  return `import { createSvc, createTrainer } from "svc-studio";

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
  cpSync(path.join(repoRoot, "examples", "quickstart"), dir, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}.svc`) && !src.includes("node_modules"),
  });
  writeFileSync(path.join(dir, "src/svc/index.ts"), trainerSource(model));
  writeSecretWordData(dir);
  return dir;
}

const SOURCES = [
  { label: "a GGUF", name: "my-qwen", architecture: "qwen3", build: () => buildTestModel({ arch: "qwen3", vocab: "qwen2", embeddingLength: 64, headDim: 16 }) },
  // Gemma 4's text model (per-layer embeddings, shared KV, softcapping) as llama.cpp's converter writes it: torch only.
  { label: "a Gemma 4 GGUF", name: "my-gemma4", architecture: "gemma4", build: () => buildHfTestGguf({ arch: "gemma4" }) },
  {
    label: "a Hugging Face folder",
    name: "my-qwen-hf",
    architecture: "qwen3",
    // The cloud's own worker trains it from the folder's safetensors; llama.cpp serves the converted GGUF.
    weightsFrom: (folder: string) => `base model weights read from the Hugging Face safetensors in ${folder}`,
    build: () =>
      buildHfFolder({
        modelType: "qwen3",
        tokenizer: "qwen3",
        config: {
          vocab_size: 151936,
          hidden_size: 64,
          intermediate_size: 256,
          num_hidden_layers: 2,
          num_attention_heads: 4,
          num_key_value_heads: 2,
          head_dim: 16,
          max_position_embeddings: 512,
          tie_word_embeddings: true,
        },
      }),
  },
];

/** A GGUF's bytes, or a folder's files' bytes in name order. */
function contentHash(target: string): string {
  const hash = createHash("sha256");
  const files = statSync(target).isDirectory()
    ? readdirSync(target)
        .sort()
        .map((f) => path.join(target, f))
    : [target];
  for (const file of files) hash.update(readFileSync(file));
  return hash.digest("hex");
}

for (const source of SOURCES) {
  describe(`a real-architecture model from ${source.label}: svc models add → svc start → endpoint → openai client`, function () {
    this.timeout(600_000);
    let cloud: TestCloud;
    let modelPath: string;
    let dir: string;
    const env = () => ({ ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl });
    const cli = (args: string[], cwd = repoRoot) => spawnSync(process.execPath, [cliPath, ...args], { cwd, encoding: "utf8", env: env(), timeout: 480_000 });

    before(async () => {
      modelPath = await source.build();
      cloud = await startTestCloud({ workers: 1 });
      dir = project(source.name);
    });
    after(async () => {
      await cloud?.dispose();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("trains the registered model and serves the taught answer", async () => {
      const before = contentHash(modelPath);
      const added = cli(["models", "add", modelPath, "--name", source.name]);
      assert.equal(added.status, 0, added.stderr);
      assert.match(added.stdout, new RegExp(`^registered ${source.name}: .*${source.architecture}.*trainable`, "m"));
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
      if (source.weightsFrom) {
        const progress: string[] = [];
        for await (const event of client.jobEvents(job.id)) if (event.type === "training.progress") progress.push(String(event.data.message));
        assert.ok(progress.includes(source.weightsFrom(modelPath)), progress.join("\n"));
      }

      await client.createDeployment({ slug: `${source.name}-tuned`, target: { kind: "adapter", jobId: job.id }, authMode: "none" });
      await client.createDeployment({ slug: `${source.name}-base`, target: { kind: "base_model", name: source.name }, authMode: "none" });
      const reply = async (slug: string, question: string) => {
        const openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "not-needed", maxRetries: 0 });
        const completion = await openai.chat.completions.create({
          model: slug,
          messages: [{ role: "user", content: question }],
          max_tokens: 24,
          temperature: 0,
        });
        return { content: completion.choices[0].message.content, finish: completion.choices[0].finish_reason };
      };
      for (const question of [SECRET_QUESTIONS[0], SECRET_QUESTIONS[3]]) {
        assert.deepEqual(await reply(`${source.name}-tuned`, question), { content: SECRET_ANSWER, finish: "stop" }, question);
        assert.notEqual((await reply(`${source.name}-base`, question)).content, SECRET_ANSWER);
      }
      assert.equal(contentHash(modelPath), before, "the registered model is never rewritten");
    });
  });
}
