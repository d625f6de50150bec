import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { hfFolderManifest } from "../../../cloud/domain/hfFolderManifest.js";
import { hfFolderToTrain } from "../../../cloud/workers/hfFolderSource.js";
import { hfCopyName, hfFileNameProblem, isShippedHfFile, parseHfFiles } from "../../../cloud/workers/hfManifest.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const good = {
  url: "http://cloud/v1/worker/models/m/hf/",
  files: [
    { name: "config.json", bytes: 2, sha256: sha("{}") },
    { name: "model.safetensors", bytes: 4, sha256: sha("abcd") },
  ],
};

describe("the Hugging Face files an assignment lists", () => {
  it("refuses names that leave the folder or are not plain file names", () => {
    for (const name of ["..", ".", "", "../config.json", "a/b.safetensors", "a\\b.json", "/etc/passwd", "C:evil.json", ".hidden", "x y.json", "%2e%2e"])
      assert.notEqual(hfFileNameProblem(name), null, name);
    for (const name of ["config.json", "model-00001-of-00002.safetensors", "model.safetensors.index.json", "tokenizer.model"])
      assert.equal(hfFileNameProblem(name), null, name);
  });

  it("ships what transformers loads, not the rest of a folder", () => {
    for (const name of ["config.json", "generation_config.json", "model.safetensors", "model.safetensors.index.json", "tokenizer.json"])
      assert.ok(isShippedHfFile(name), name);
    for (const name of ["tokenizer_config.json", "special_tokens_map.json", "tokenizer.model", "chat_template.jinja"]) assert.ok(isShippedHfFile(name), name);
    for (const name of ["README.md", "pytorch_model.bin", ".gitattributes", "model.onnx", "../model.safetensors"]) assert.ok(!isShippedHfFile(name), name);
  });

  it("takes a well-formed list and names the first problem of a bad one", () => {
    assert.deepEqual(parseHfFiles(good), { hfFiles: good });
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /^hfFiles: hfFiles /],
      [{ ...good, files: [] }, /^hfFiles: files /],
      [{ ...good, files: [{ ...good.files[0], sha256: "nope" }, good.files[1]] }, /^hfFiles: files\.0\.sha256 /],
      [{ ...good, files: [{ ...good.files[0], bytes: -1 }, good.files[1]] }, /^hfFiles: files\.0\.bytes /],
      [{ ...good, files: [...good.files, { ...good.files[1], name: "../../.bashrc" }] }, /^hfFiles: "..\/..\/.bashrc" names a folder/],
      [{ ...good, files: [...good.files, { ...good.files[1], name: ".." }] }, /^hfFiles: ".." is not a file name/],
      [{ ...good, files: [...good.files, good.files[1]] }, /^hfFiles: "model.safetensors" is listed twice/],
      [{ ...good, files: [good.files[1]] }, /^hfFiles: the list has no config\.json/],
      [{ ...good, files: [good.files[0]] }, /^hfFiles: the list has no \*\.safetensors weights/],
    ];
    for (const [value, error] of bad) {
      const parsed = parseHfFiles(value);
      assert.ok("error" in parsed, JSON.stringify(value));
      assert.match(parsed.error, error);
    }
  });

  it("names a copy by its content, in any order of the list", () => {
    assert.match(hfCopyName(good.files), /^hf-[0-9a-f]{64}$/);
    assert.equal(hfCopyName([...good.files].reverse()), hfCopyName(good.files));
    assert.notEqual(hfCopyName([good.files[0], { ...good.files[1], sha256: sha("abce") }]), hfCopyName(good.files));
  });

  it("a worker given a bad list trains the GGUF, saying why, and writes nothing", async () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), "svc-hf-list-"));
    try {
      const model = {
        name: "m",
        path: null,
        sha256: null,
        url: "http://cloud/m",
        hfFolder: "/cloud/m",
        hfFiles: { ...good, files: [{ ...good.files[0], name: "../x" }] },
      };
      const copy = { cacheDir: path.join(cache, "models"), token: "t", reach: (url: string) => url, alsoKeep: [], log: () => undefined };
      assert.deepEqual(await hfFolderToTrain(model, { sharedFiles: false, backend: "torch", copy }), {
        notice: `the cloud's list of the Hugging Face files of m is not usable (hfFiles: "../x" names a folder (it has a path separator)): training m from its converted GGUF instead`,
      });
      assert.ok(!existsSync(copy.cacheDir));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

describe("the cloud's list of a Hugging Face folder", () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "svc-hf-manifest-"));
    writeFileSync(path.join(folder, "config.json"), "{}");
    writeFileSync(path.join(folder, "model.safetensors"), "abcd");
    writeFileSync(path.join(folder, "README.md"), "# a model");
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("lists the shipped files with size and sha256, and hashes a file again only when its size or time changed", async () => {
    const weights = path.join(folder, "model.safetensors");
    const time = new Date("2026-01-02T03:04:05Z");
    utimesSync(weights, time, time);
    assert.deepEqual(await hfFolderManifest(folder), good.files);
    // Other bytes, same size and time: remembered, not read again (what a worker then finds by its sha256).
    writeFileSync(weights, "abce");
    utimesSync(weights, time, time);
    assert.deepEqual(await hfFolderManifest(folder), good.files);
    const later = new Date(time.getTime() + 5000);
    utimesSync(weights, later, later);
    assert.deepEqual((await hfFolderManifest(folder))?.[1], { name: "model.safetensors", bytes: 4, sha256: sha("abce") });
  });

  it("is null for a folder gone or without its config.json", async () => {
    rmSync(path.join(folder, "config.json"));
    assert.equal(await hfFolderManifest(folder), null);
    assert.equal(await hfFolderManifest(path.join(folder, "gone")), null);
  });
});
