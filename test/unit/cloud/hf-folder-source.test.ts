import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { hfFolderToTrain } from "../../../cloud/workers/hfFolderSource.js";

describe("which form of a Hugging Face model a worker trains", () => {
  let folder: string;
  const model = (hfFolder: string | null) => ({ name: "my-qwen-hf", path: "/data/converted/my-qwen-hf.gguf", sha256: null, url: "http://cloud/m", hfFolder });

  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "svc-hf-source-"));
    writeFileSync(path.join(folder, "config.json"), "{}");
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("the cloud's own worker trains the folder where it is", async () => {
    assert.deepEqual(await hfFolderToTrain(model(folder), true), { folder });
  });

  it("a worker on another machine trains the converted GGUF and says so in one line", async () => {
    assert.deepEqual(await hfFolderToTrain(model(folder), false), {
      notice: "this worker is not on the cloud's machine: it trains my-qwen-hf from its converted GGUF, not from the Hugging Face folder's safetensors",
    });
  });

  it("a folder moved or deleted since it was added leaves the converted GGUF, and says so", async () => {
    rmSync(folder, { recursive: true, force: true });
    assert.deepEqual(await hfFolderToTrain(model(folder), true), {
      notice: `the Hugging Face folder ${folder} of my-qwen-hf is gone (moved or deleted): training from the GGUF converted from it`,
    });
  });

  it("a model added as a GGUF has nothing to say", async () => {
    assert.deepEqual(await hfFolderToTrain(model(null), false), {});
  });
});
