import assert from "node:assert/strict";
import path from "node:path";
import { sdkImportSpecifier } from "../../../cli/project/bundle.js";
import { importSpecifier, safeFileName } from "../../../sdk/platform/fileNames.js";

describe("platform: import specifiers and file names on every OS", () => {
  it("the trainer bundle imports the SDK by a file URL on a Windows path (Node's ESM loader refuses C:\\...)", () => {
    const root = "C:\\Users\\Ada Lovelace\\proj\\node_modules\\svc-studio";
    assert.equal(sdkImportSpecifier(root, path.win32), "file:///C:/Users/Ada%20Lovelace/proj/node_modules/svc-studio/dist/sdk.mjs");
  });

  it("a Windows UNC path and characters a URL escapes", () => {
    assert.equal(importSpecifier("\\\\server\\share\\a#b\\sdk.mjs", path.win32), "file://server/share/a%23b/sdk.mjs");
  });

  it("the trainer bundle imports the SDK by a file URL on a POSIX path", () => {
    assert.equal(
      sdkImportSpecifier("/home/ada/my proj/node_modules/svc-studio", path.posix),
      "file:///home/ada/my%20proj/node_modules/svc-studio/dist/sdk.mjs",
    );
  });

  it("a model name becomes a file name Windows accepts: no ':' (an NTFS stream), no reserved device name", () => {
    assert.equal(safeFileName("qwen3:0.6b"), "qwen3_3a0.6b");
    assert.equal(safeFileName("hf.co/org/model:Q4_K_M"), "hf.co_2forg_2fmodel_3aQ4_K_M");
    assert.equal(safeFileName("con"), "_con");
    assert.equal(safeFileName("NUL.gguf"), "_NUL.gguf");
    assert.equal(safeFileName("model. "), "model_2e_20");
    assert.equal(safeFileName(""), "_");
  });

  it("names that are already safe keep their spelling (existing caches stay valid)", () => {
    for (const name of ["svc-tiny", "Qwen2.5-0.5B-Instruct", "llama_3.2_1b"]) assert.equal(safeFileName(name), name);
  });

  it("different names stay different", () => {
    const names = ["a:b", "a?b", "a*b", "a|b", "a<b", "a>b", 'a"b', "a\\b", "a/b", "a_b"];
    assert.equal(new Set(names.map(safeFileName)).size, names.length);
  });
});
