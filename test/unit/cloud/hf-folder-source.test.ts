import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { hfFolderToTrain } from "../../../cloud/workers/hfFolderSource.js";

describe("which form of a Hugging Face model a worker trains", () => {
  let folder: string;
  const model = (hfFolder: string | null, hfFiles?: null) => ({
    name: "my-qwen-hf",
    path: "/data/converted/my-qwen-hf.gguf",
    sha256: null,
    url: "http://cloud/m",
    hfFolder,
    hfFiles,
  });
  const shared = { sharedFiles: true, backend: "torch" as const };
  // A remote worker that would fetch from a cloud nobody listens on: these cases must not get that far.
  const remote = (backend: "torch" | "tfjs") => ({
    sharedFiles: false,
    backend,
    copy: { cacheDir: path.join(folder, "cache"), token: "t", reach: (url: string) => url, alsoKeep: [], log: () => undefined },
  });

  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "svc-hf-source-"));
    writeFileSync(path.join(folder, "config.json"), "{}");
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("the cloud's own worker trains the folder where it is", async () => {
    assert.deepEqual(await hfFolderToTrain(model(folder), shared), { folder });
  });

  it("a tfjs worker on another machine fetches nothing: it trains the GGUF", async () => {
    assert.deepEqual(await hfFolderToTrain(model(folder), remote("tfjs")), {
      notice: "the tfjs backend reads no safetensors: training my-qwen-hf from its converted GGUF instead",
    });
    assert.ok(!existsSync(path.join(folder, "cache")), "nothing fetched");
  });

  it("a torch worker on another machine trains the GGUF, saying why, when the cloud lists no files", async () => {
    assert.deepEqual(await hfFolderToTrain(model(folder), remote("torch")), {
      notice: "the cloud did not list the files of the Hugging Face folder of my-qwen-hf (an older cloud): training my-qwen-hf from its converted GGUF instead",
    });
    assert.deepEqual(await hfFolderToTrain(model(folder, null), remote("torch")), {
      notice: `the Hugging Face folder ${folder} of my-qwen-hf is gone on the cloud's machine (moved or deleted): training my-qwen-hf from its converted GGUF instead`,
    });
  });

  it("a folder moved or deleted since it was added leaves the converted GGUF, and says so", async () => {
    rmSync(folder, { recursive: true, force: true });
    assert.deepEqual(await hfFolderToTrain(model(folder), shared), {
      notice: `the Hugging Face folder ${folder} of my-qwen-hf is gone (moved or deleted): training from the GGUF converted from it`,
    });
  });

  it("a model added as a GGUF has nothing to say", async () => {
    assert.deepEqual(await hfFolderToTrain(model(null), remote("torch")), {});
  });
});
