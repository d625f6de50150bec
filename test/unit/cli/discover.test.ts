import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { discoverModels, validModelName } from "../../../cli/discover.js";
import { scanCandidates } from "../../../cli/discoverSources.js";
import { findGgufFiles } from "../../../cli/discoverWalk.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { writeTinyModel, type TinyModel } from "../../support/modelFiles.js";

/**
 * A fake machine: a HOME holding LM Studio's two model folders, a Hugging Face hub cache whose
 * snapshot files are links to blobs (as huggingface_hub lays them out), Ollama's manifests and
 * blobs, plus an extra folder for SVC_MODEL_PATHS. Every model file is a small real GGUF.
 */
describe("svc models discover: GGUF files in the usual places", function () {
  this.timeout(60_000);
  let tmp: TempDir;
  let home: string;
  let env: Record<string, string>;
  const files: Record<string, TinyModel> = {};

  before(async () => {
    tmp = await createTempDir("discover");
    home = path.join(tmp.path, "home");
    const at = async (key: string, file: string, spec: Parameters<typeof writeTinyModel>[1]) => {
      await mkdir(path.dirname(file), { recursive: true });
      files[key] = await writeTinyModel(file, spec);
    };
    // LM Studio: publisher/repo/file, in both the new and the old folder.
    await at("lmstudio", path.join(home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q4_K_M.gguf"), {
      architecture: "qwen3",
      name: "Qwen3 0.6B",
      fileType: 15,
      contextLength: 40960,
    });
    await at("lmstudioOld", path.join(home, ".cache/lm-studio/models/bartowski/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct-Q8_0.gguf"), {
      architecture: "llama",
      name: "SmolLM2 135M Instruct",
      fileType: 7,
    });
    await writeFile(path.join(home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/README.md"), "not a model");
    // A file named .gguf that is not one: skipped with a note, the rest still listed.
    await writeFile(path.join(home, ".lmstudio/models/lmstudio-community/Qwen3-0.6B-GGUF/broken.gguf"), "definitely not GGUF");

    // Hugging Face hub cache: snapshots link to blobs.
    const hub = path.join(tmp.path, "hf-home", "hub");
    const repo = path.join(hub, "models--Qwen--Qwen2.5-0.5B-Instruct-GGUF");
    const blob = path.join(repo, "blobs", "4f1a2b");
    await at("hf", blob, { architecture: "qwen2", name: "Qwen2.5 0.5B Instruct", fileType: 15 });
    await mkdir(path.join(repo, "snapshots", "abc123"), { recursive: true });
    await symlink(blob, path.join(repo, "snapshots", "abc123", "qwen2.5-0.5b-instruct-q4_k_m.gguf"));
    // A second revision linking the same blob is the same file: listed once.
    await mkdir(path.join(repo, "snapshots", "def456"), { recursive: true });
    await symlink(blob, path.join(repo, "snapshots", "def456", "qwen2.5-0.5b-instruct-q4_k_m.gguf"));

    // Ollama (OLLAMA_MODELS points elsewhere than ~/.ollama): a manifest per NAME/TAG.
    const ollama = path.join(tmp.path, "ollama-models");
    await mkdir(path.join(ollama, "blobs"), { recursive: true });
    const tmpBlob = path.join(ollama, "blobs", "incoming");
    await writeTinyModel(tmpBlob, { architecture: "qwen3", name: "Qwen3 0.6B", fileType: 15 });
    const hex = createHash("sha256").update(readFileSync(tmpBlob)).digest("hex");
    const blobPath = path.join(ollama, "blobs", `sha256-${hex}`);
    files.ollama = await writeTinyModel(blobPath, { architecture: "qwen3", name: "Qwen3 0.6B", fileType: 15 });
    const manifest = (digest: string) =>
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: `sha256:${"0".repeat(64)}`, size: 10 },
        layers: [
          { mediaType: "application/vnd.ollama.image.license", digest: `sha256:${"1".repeat(64)}`, size: 10 },
          { mediaType: "application/vnd.ollama.image.model", digest, size: 1000 },
          { mediaType: "application/vnd.ollama.image.template", digest: `sha256:${"2".repeat(64)}`, size: 10 },
        ],
      });
    const library = path.join(ollama, "manifests", "registry.ollama.ai", "library");
    await mkdir(path.join(library, "qwen3"), { recursive: true });
    await writeFile(path.join(library, "qwen3", "0.6b"), manifest(`sha256:${hex}`));
    // A manifest whose blob was pruned: a note, not a failure.
    await mkdir(path.join(library, "llama3.2"), { recursive: true });
    await writeFile(path.join(library, "llama3.2", "1b"), manifest(`sha256:${"f".repeat(64)}`));

    // SVC_MODEL_PATHS: one folder and one file; a serve-only architecture among them.
    const extra = path.join(tmp.path, "extra");
    await at("extraDir", path.join(extra, "nested", "gemma-2-2b-it-Q4_K_M.gguf"), { architecture: "gemma2", name: "Gemma 2 2B", fileType: 15 });
    await at("extraFile", path.join(tmp.path, "loose", "Llama-3.2-1B-Instruct-Q4_K_M.gguf"), { architecture: "llama", fileType: 15 });

    env = {
      HOME: home,
      HF_HOME: path.join(tmp.path, "hf-home"),
      OLLAMA_MODELS: ollama,
      SVC_MODEL_PATHS: [extra, files.extraFile.path, path.join(tmp.path, "missing")].join(path.delimiter),
    };
  });
  after(async () => {
    await tmp?.remove();
  });

  it("finds every place's files with the name each place suggests", async () => {
    const { models } = await discoverModels(env);
    assert.deepEqual(
      models.map((m) => [m.source, m.name, m.path]),
      [
        ["lmstudio", "Qwen3-0.6B-Q4_K_M", files.lmstudio.path],
        ["lmstudio", "SmolLM2-135M-Instruct-Q8_0", files.lmstudioOld.path],
        [
          "huggingface",
          "qwen2.5-0.5b-instruct-q4_k_m",
          path.join(env.HF_HOME, "hub/models--Qwen--Qwen2.5-0.5B-Instruct-GGUF/snapshots/abc123/qwen2.5-0.5b-instruct-q4_k_m.gguf"),
        ],
        ["ollama", "qwen3:0.6b", files.ollama.path],
        ["SVC_MODEL_PATHS", "gemma-2-2b-it-Q4_K_M", files.extraDir.path],
        ["SVC_MODEL_PATHS", "Llama-3.2-1B-Instruct-Q4_K_M", files.extraFile.path],
      ],
    );
  });

  it("reports each file's header facts and whether svc can train it", async () => {
    const { models } = await discoverModels(env);
    const byName = new Map(models.map((m) => [m.name, m]));
    const qwen = byName.get("qwen3:0.6b")!;
    assert.equal(qwen.architecture, "qwen3");
    assert.equal(qwen.parameters, files.ollama.parameters);
    assert.equal(qwen.sizeBytes, files.ollama.sizeBytes);
    assert.equal(qwen.quantization, "Q4_K_M");
    assert.equal(qwen.trainable, true);
    assert.equal(qwen.notTrainableReason, null);
    assert.equal(byName.get("Qwen3-0.6B-Q4_K_M")!.contextLength, 40960);
    assert.equal(byName.get("SmolLM2-135M-Instruct-Q8_0")!.quantization, "Q8_0");
    const gemma = byName.get("gemma-2-2b-it-Q4_K_M")!;
    assert.equal(gemma.architecture, "gemma2");
    assert.equal(gemma.trainable, false);
    assert.match(gemma.notTrainableReason ?? "", /gemma2/);
  });

  it("skips unreadable files and blob-less manifests with a note each", async () => {
    const { notes } = await discoverModels(env);
    assert.equal(notes.length, 2, notes.join("\n"));
    assert.match(notes.find((n) => n.includes("llama3.2")) ?? "", /^skipped ollama llama3\.2:1b: its model blob .*sha256-f{64} is missing$/);
    assert.match(notes.find((n) => n.includes("broken.gguf")) ?? "", /^skipped .*broken\.gguf: /);
  });

  it("finds nothing, without errors, on a machine with none of these folders", async () => {
    const empty = path.join(tmp.path, "empty-home");
    await mkdir(empty, { recursive: true });
    assert.deepEqual(await discoverModels({ HOME: empty }), { models: [], notes: [] });
  });

  it("HF_HUB_CACHE wins over HF_HOME, and the default is ~/.cache/huggingface/hub", async () => {
    const hubOnly = await scanCandidates({ HOME: path.join(tmp.path, "empty-home"), HF_HUB_CACHE: path.join(env.HF_HOME, "hub"), HF_HOME: "/nonexistent" });
    assert.deepEqual(
      hubOnly.candidates.map((c) => c.source),
      ["huggingface", "huggingface"],
      "both snapshot links are candidates; discovery lists the file once",
    );
    const fakeHome = path.join(tmp.path, "hf-default-home");
    await mkdir(path.join(fakeHome, ".cache"), { recursive: true });
    await symlink(path.join(tmp.path, "hf-home"), path.join(fakeHome, ".cache", "huggingface"));
    const byDefault = await scanCandidates({ HOME: fakeHome });
    assert.deepEqual(
      byDefault.candidates.map((c) => c.source),
      ["huggingface", "huggingface"],
    );
  });

  it("gives the same name twice only once: the second becomes name-2", async () => {
    const dir = path.join(tmp.path, "twins");
    await mkdir(path.join(dir, "a"), { recursive: true });
    await mkdir(path.join(dir, "b"), { recursive: true });
    await writeTinyModel(path.join(dir, "a", "model.gguf"), { architecture: "llama" });
    await writeTinyModel(path.join(dir, "b", "model.gguf"), { architecture: "qwen2" });
    const { models } = await discoverModels({ HOME: path.join(tmp.path, "empty-home"), SVC_MODEL_PATHS: dir });
    assert.deepEqual(
      models.map((m) => [m.name, m.architecture]),
      [
        ["model", "llama"],
        ["model-2", "qwen2"],
      ],
    );
  });

  it("walks links without looping, skips dot-folders and later parts of split files", async () => {
    const dir = path.join(tmp.path, "walk");
    await mkdir(path.join(dir, "sub", ".cache"), { recursive: true });
    await writeFile(path.join(dir, "sub", "x-00001-of-00002.gguf"), "");
    await writeFile(path.join(dir, "sub", "x-00002-of-00002.gguf"), "");
    await writeFile(path.join(dir, "sub", ".cache", "hidden.gguf"), "");
    await writeFile(path.join(dir, "sub", "UPPER.GGUF"), "");
    await symlink(dir, path.join(dir, "sub", "loop"));
    assert.deepEqual(await findGgufFiles(dir), [path.join(dir, "sub", "UPPER.GGUF"), path.join(dir, "sub", "x-00001-of-00002.gguf")]);
  });

  it("makes any file name a valid model name", () => {
    assert.equal(validModelName("Qwen3 0.6B (Q4_K_M)"), "Qwen3-0.6B-Q4_K_M");
    assert.equal(validModelName("--weird--"), "weird");
    assert.equal(validModelName("???"), "model");
    assert.ok(validModelName("x".repeat(200)).length <= 80);
  });
});
