import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { modelCacheBytes, pruneModelCache } from "../../../cloud/workers/baseModelCache.js";

describe("a remote worker's base-model cache stays under its size", () => {
  const copy = (dir: string, hex: string, bytes: number, usedSecondsAgo: number) => {
    const file = path.join(dir, `${hex.repeat(64)}.gguf`);
    writeFileSync(file, Buffer.alloc(bytes));
    const at = new Date(Date.now() - usedSecondsAgo * 1000);
    utimesSync(file, at, at);
    return file;
  };

  it("removes the least recently trained copies first, never the one in use, and nothing else in the folder", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-model-cache-"));
    copy(dir, "a", 400, 300);
    const b = copy(dir, "b", 400, 200);
    const c = copy(dir, "c", 400, 100);
    writeFileSync(path.join(dir, "download-1234.part"), Buffer.alloc(900));
    const removed = await pruneModelCache(dir, c, 850);
    assert.deepEqual(
      removed.map((f) => path.basename(f)),
      [`${"a".repeat(64)}.gguf`],
    );
    assert.deepEqual(readdirSync(dir).sort(), [path.basename(b), path.basename(c), "download-1234.part"].sort());
  });

  it("keeps the copy in use even when it alone is over the budget", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-model-cache-"));
    const older = copy(dir, "d", 500, 50);
    const inUse = copy(dir, "e", 500, 500);
    assert.deepEqual(await pruneModelCache(dir, inUse, 100), [older]);
    assert.deepEqual(readdirSync(dir), [path.basename(inUse)]);
  });

  it("counts a Hugging Face copy (a folder) by its files, removes it least recently trained first, and keeps every copy in use", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-model-cache-"));
    const folder = (hex: string, bytes: number, usedSecondsAgo: number) => {
      const copyDir = path.join(dir, `hf-${hex.repeat(64)}`);
      mkdirSync(copyDir);
      writeFileSync(path.join(copyDir, "config.json"), "{}");
      writeFileSync(path.join(copyDir, "model.safetensors"), Buffer.alloc(bytes - 2));
      const at = new Date(Date.now() - usedSecondsAgo * 1000);
      utimesSync(copyDir, at, at);
      return copyDir;
    };
    const oldFolder = folder("a", 400, 300);
    const gguf = copy(dir, "b", 400, 200);
    const inUse = folder("c", 400, 400);
    assert.deepEqual(await pruneModelCache(dir, [gguf, inUse], 850), [oldFolder]);
    assert.deepEqual(readdirSync(dir).sort(), [path.basename(gguf), path.basename(inUse)].sort());
  });

  it("reads its size from SVC_WORKER_MODEL_CACHE_GB, 20 GB by default", () => {
    assert.equal(modelCacheBytes({}), 20e9);
    assert.equal(modelCacheBytes({ SVC_WORKER_MODEL_CACHE_GB: "2.5" }), 2.5e9);
    assert.equal(modelCacheBytes({ SVC_WORKER_MODEL_CACHE_GB: "lots" }), 20e9);
  });
});
