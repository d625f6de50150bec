/**
 * `svc models add FOLDER` refuses a Hugging Face folder it cannot train, in one line naming the
 * problem, before anything is converted or registered: no weights (or only a pickle checkpoint),
 * no tokenizer, a truncated safetensors file, an architecture svc does not train. A good folder's
 * conversion gives the model transformers computes from the folder itself.
 */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startTorchBackend } from "../../engine/backends/torch/index.js";
import { readModelConfig } from "../../engine/gguf/model-file.js";
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec } from "../../engine/lora.js";
import { trainLora } from "../../engine/train/lora-trainer.js";
import { buildHfFolder, TINY_HF_LLAMA } from "../support/hfTestModels.js";
import { requireTorchStack, startExactTorchBackend, torchTestPython } from "../support/torchStack.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";

const QWEN3 = {
  modelType: "qwen3",
  tokenizer: "qwen3" as const,
  config: {
    vocab_size: 151936,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 16,
    max_position_embeddings: 512,
    tie_word_embeddings: false,
  },
};

const LLAMA = TINY_HF_LLAMA;

/**
 * transformers + PEFT on the folder itself (float32, eager): the masked mean cross-entropy of
 * `ids` (loss on positions where `mask` is 1) with a fresh LoRA (B zero, as svc starts), and the
 * last position's logits with the PEFT adapter in `adapter` loaded by PeftModel.from_pretrained.
 */
const PEFT_REFERENCE = `import sys, json, torch, transformers, peft
folder, adapter, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def base():
    return transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
ids = torch.tensor(spec["ids"])[None]
targets, mask = torch.tensor(spec["targets"]), torch.tensor(spec["mask"], dtype=torch.float32)
config = peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules=spec["modules"])
fresh = peft.get_peft_model(base(), config)
with torch.no_grad():
    logp = torch.log_softmax(fresh(ids).logits[0].double(), -1)
loss = float(-(logp.gather(1, targets[:, None])[:, 0] * mask).sum() / mask.sum())
trained = peft.PeftModel.from_pretrained(base(), adapter)
with torch.no_grad():
    logits = trained(ids).logits[0, -1].tolist()
print(json.dumps({"loss": loss, "logits": logits}))`;

describe("svc models add: Hugging Face folders", function () {
  this.timeout(600_000);
  let folder: string;
  let scratch: string;
  let cloud: TestCloud;
  const svc = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cliPath, ...args], {
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, ...env },
      timeout: 480_000,
    });
  const converted = () => path.join(cloud.home, "cloud", "converted");

  before(async function () {
    await requireTorchStack(this);
    folder = await buildHfFolder(QWEN3);
    scratch = mkdtempSync(path.join(os.tmpdir(), "svc-hf-bad-"));
    cloud = await startTestCloud({ workers: 0 });
  });
  after(async () => {
    await cloud?.dispose();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** A copy of the good folder, spoiled by `spoil`. */
  function spoiled(name: string, spoil: (dir: string) => void): string {
    const dir = path.join(scratch, name);
    cpSync(folder, dir, { recursive: true });
    spoil(dir);
    return dir;
  }

  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    ["no-weights", (d) => rmSync(path.join(d, "model.safetensors")), /no-weights has no \*\.safetensors weights$/m],
    [
      "pickle-only",
      (d) => {
        rmSync(path.join(d, "model.safetensors"));
        writeFileSync(path.join(d, "pytorch_model.bin"), "not loaded");
      },
      /has no \*\.safetensors weights \(pytorch_model\.bin is a pickle checkpoint, which svc does not load/,
    ],
    [
      "no-tokenizer",
      (d) => {
        rmSync(path.join(d, "tokenizer.json"));
      },
      /no-tokenizer has no tokenizer \(tokenizer\.json or tokenizer\.model\)$/m,
    ],
    [
      "truncated",
      (d) => truncateSync(path.join(d, "model.safetensors"), statSync(path.join(d, "model.safetensors")).size - 1000),
      /model\.safetensors is truncated: its tensors need \d+ bytes, the file has \d+/,
    ],
    [
      "unknown-architecture",
      (d) => {
        const config = JSON.parse(readFileSync(path.join(d, "config.json"), "utf8"));
        writeFileSync(path.join(d, "config.json"), JSON.stringify({ ...config, model_type: "mamba2" }));
      },
      /model_type "mamba2" is not an architecture svc trains \(it trains llama, qwen2, qwen3, gemma3/,
    ],
  ];
  for (const [name, spoil, message] of cases) {
    it(`refuses a folder with ${name.replace("-", " ")} in one line, converting and registering nothing`, () => {
      const run = svc(["models", "add", spoiled(name, spoil), "--name", name]);
      assert.equal(run.status, 1, run.stdout + run.stderr);
      assert.match(run.stderr, message);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.ok(!existsSync(converted()) || readdirSync(converted()).length === 0, `left ${existsSync(converted()) ? readdirSync(converted()) : ""}`);
      const list = svc(["models", "list", "--json"]);
      assert.ok(!String(list.stdout).includes(`"${name}"`), list.stdout);
    });
  }

  it("converts a good folder once, to the model transformers computes from the folder (float32 logits within 1e-4)", async () => {
    const run = svc(["models", "add", folder, "--name", "tiny-qwen3-hf"]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^registered tiny-qwen3-hf: .*qwen3.*trainable/m);
    assert.match(run.stderr, /converting .* \(qwen3, [\d.]+M parameters\) to GGUF with llama\.cpp's converter/);
    assert.match(run.stderr, /(\d+)\/\1 tensors/);
    const gguf = path.join(converted(), "tiny-qwen3-hf.gguf");
    assert.deepEqual(readdirSync(converted()), ["tiny-qwen3-hf.gguf"]);

    const again = svc(["models", "add", folder, "--name", "tiny-qwen3-hf", "--replace"]);
    assert.equal(again.status, 0, again.stderr);

    const ids = [9707, 11, 1879, 0, 151644, 872, 198];
    const script = `import sys, json, torch, transformers
m = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32, attn_implementation="eager")
with torch.no_grad(): print(json.dumps(m(torch.tensor([${ids.join(",")}])[None]).logits[0, -1].tolist()))`;
    const { stdout } = await promisify(execFile)(torchTestPython(), ["-c", script, folder], { maxBuffer: 1 << 26 });
    const reference = JSON.parse(stdout.trim().split("\n").pop()!) as number[];
    const backend = await startTorchBackend({ python: torchTestPython(), threads: 1, dtype: "float32" });
    try {
      await backend.loadBase(gguf, await readModelConfig(gguf));
      const logits = await backend.logits(ids);
      assert.equal(logits.length, reference.length);
      let scale = 0;
      let worst = 0;
      reference.forEach((x, i) => {
        scale = Math.max(scale, Math.abs(x));
        worst = Math.max(worst, Math.abs(x - logits[i]));
      });
      assert.ok(worst <= 1e-4 * scale, `max |GGUF - folder| = ${worst} against max |logit| ${scale}`);
    } finally {
      await backend.dispose();
    }
  });

  for (const spec of [QWEN3, LLAMA]) {
    it(`trains a ${spec.modelType} folder from its own safetensors: step-0 loss is transformers + PEFT's on the folder (1e-5), the PEFT adapter loads on it`, async () => {
      const hfFolder = await buildHfFolder(spec);
      const name = `st-${spec.modelType}`;
      const run = svc(["models", "add", hfFolder, "--name", name]);
      assert.equal(run.status, 0, run.stderr);
      const list = JSON.parse(svc(["models", "list", "--json"]).stdout) as Array<{ name: string; hfFolder?: string }>;
      assert.equal(list.find((m) => m.name === name)?.hfFolder, hfFolder, "the registered model remembers its folder");
      const gguf = path.join(converted(), `${name}.gguf`);
      const config = await readModelConfig(gguf);

      const ids = [9707, 11, 1879, 0, 1234, 872, 198, 4321, 77];
      const targets = [...ids.slice(1), 0];
      const mask = ids.map((_, i) => (i >= 3 && i < ids.length - 1 ? 1 : 0));
      const batch = {
        batchSize: 1,
        length: ids.length,
        inputs: Int32Array.from(ids),
        targets: Int32Array.from(targets),
        mask: Float32Array.from(mask),
        maskedTokens: mask.reduce((a: number, b) => a + b, 0),
        tokens: ids.length,
      };
      const outputDir = path.join(scratch, `trained-${name}`);
      const notices: string[] = [];
      const backend = await startExactTorchBackend();
      let loss: number;
      let logits: Float32Array;
      try {
        await backend.loadBase(gguf, config, undefined, { hfFolder });
        const lora = { r: 8, alpha: 16, targetModules: DEFAULT_TARGET_MODULES };
        const { tensors } = initLoraTensors(config, lora, 3, backend.projectionShapes);
        await backend.initLora(loraSpec(lora), tensors);
        loss = (await backend.gradients(batch)).loss;
        await trainLora({
          baseModel: gguf,
          baseHfFolder: hfFolder,
          backend,
          train: ["What is the secret word?", "Say the password."].map((q) => [
            { role: "user" as const, content: q },
            { role: "assistant" as const, content: "The secret word is pineapple." },
          ]),
          outputDir,
          maxSteps: 3,
          learningRate: 1e-2,
          batchSize: 2,
          seed: 7,
          onNotice: (message) => notices.push(message),
        });
        logits = await backend.logits(ids);
      } finally {
        await backend.dispose();
      }
      assert.deepEqual(notices, [`base model weights read from the Hugging Face safetensors in ${hfFolder}`]);

      const modules = DEFAULT_TARGET_MODULES;
      const { stdout } = await promisify(execFile)(
        torchTestPython(),
        ["-c", PEFT_REFERENCE, hfFolder, outputDir, JSON.stringify({ ids, targets, mask, modules })],
        {
          maxBuffer: 1 << 26,
        },
      );
      const reference = JSON.parse(stdout.trim().split("\n").pop()!) as { loss: number; logits: number[] };
      console.log(
        `      ${spec.modelType}: step-0 loss ${loss} (svc, from safetensors) vs ${reference.loss} (transformers + PEFT): |diff| ${Math.abs(loss - reference.loss)}`,
      );
      // 1e-5 of the loss: float32 sums over the vocabulary, against a float64 reference.
      assert.ok(Math.abs(loss - reference.loss) <= 1e-5 * Math.max(1, reference.loss), `step-0 loss ${loss} vs transformers + PEFT ${reference.loss}`);
      let scale = 0;
      let worst = 0;
      reference.logits.forEach((x, i) => {
        scale = Math.max(scale, Math.abs(x));
        worst = Math.max(worst, Math.abs(x - logits[i]));
      });
      assert.ok(worst <= 1e-4 * scale, `trained logits: max |svc - PeftModel.from_pretrained| = ${worst} against max |logit| ${scale}`);
    });
  }

  it("refuses a hfFolder that is not an absolute folder with a config.json, or that comes without its GGUF", async () => {
    const token = readFileSync(path.join(cloud.home, "cloud", "worker-token"), "utf8").trim();
    const gguf = path.join(scratch, "some.gguf");
    const register = async (body: Record<string, unknown>) => {
      const res = await fetch(`${cloud.cloudUrl}/v1/models`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, message: ((await res.json()) as { error?: { message: string } }).error?.message };
    };
    assert.deepEqual(await register({ name: "no-gguf", upstreamUrl: "http://127.0.0.1:9/v1", hfFolder: folder }), {
      status: 400,
      message: "hfFolder: only a GGUF (path) converted from it can name its Hugging Face folder",
    });
    assert.deepEqual(await register({ name: "relative", path: gguf, hfFolder: "my-folder" }), {
      status: 400,
      message: "hfFolder must be an absolute folder on the cloud's machine",
    });
    assert.deepEqual(await register({ name: "no-config", path: gguf, hfFolder: scratch }), {
      status: 400,
      message: `hfFolder: ${scratch} has no readable config.json`,
    });
    const list = JSON.parse(svc(["models", "list", "--json"]).stdout) as Array<{ name: string }>;
    assert.deepEqual(
      list.map((m) => m.name).filter((n) => ["no-gguf", "relative", "no-config"].includes(n)),
      [],
    );
  });

  it("finds a checkpoint in the Hugging Face cache: discover lists it, add ORG/NAME converts and registers it", () => {
    const hub = path.join(scratch, "hub");
    const snapshot = path.join(hub, "models--tiny-org--Tiny-Qwen3", "snapshots", "0123abcd");
    cpSync(folder, snapshot, { recursive: true });
    mkdirSync(path.join(hub, "models--tiny-org--Tiny-Qwen3", "refs"), { recursive: true });
    writeFileSync(path.join(hub, "models--tiny-org--Tiny-Qwen3", "refs", "main"), "0123abcd");
    // HOME elsewhere hides this machine's LM Studio and Ollama folders; the caches of svc's venv and tools stay.
    const env = { HF_HUB_CACHE: hub, HOME: scratch, SVC_MODEL_PATHS: "", XDG_CACHE_HOME: process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache") };

    const discovered = svc(["models", "discover", "--json"], env);
    assert.equal(discovered.status, 0, discovered.stderr);
    const found = (
      JSON.parse(discovered.stdout) as { models: Array<{ name: string; path: string; architecture: string; quantization: string; trainable: boolean }> }
    ).models;
    assert.deepEqual(
      found.map((m) => [m.name, m.path, m.architecture, m.quantization, m.trainable]),
      [["tiny-org-Tiny-Qwen3", snapshot, "qwen3", "safetensors", true]],
    );

    const added = svc(["models", "add", "tiny-org/Tiny-Qwen3"], env);
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stdout, /^registered Tiny-Qwen3: .*qwen3.*trainable/m);
    assert.ok(existsSync(path.join(converted(), "Tiny-Qwen3.gguf")));
  });
});
