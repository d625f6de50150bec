/** Which file a panel's "open the dataset at this line" may open (extension/core/panelApi.ts projectFile). */
import assert from "node:assert/strict";
import path from "node:path";
import { projectFile } from "../../../extension/core/panelApi.js";
import { TransportError } from "../../../ui-shared/transport.js";

describe("extension/core/panelApi projectFile", () => {
  const folder = path.resolve("/work/project");
  const refused = (file: unknown, status = 400) =>
    assert.throws(
      () => projectFile(folder, file),
      (e: TransportError) => e.status === status,
    );

  it("resolves a dataset the trainer names, relative to the project", () => {
    assert.equal(projectFile(folder, "data/train.jsonl"), path.join(folder, "data", "train.jsonl"));
    assert.equal(projectFile(folder, "./data/../data/eval.jsonl"), path.join(folder, "data", "eval.jsonl"));
  });

  it("refuses anything outside the project, the folder itself, and a missing name", () => {
    refused("../other/train.jsonl");
    refused("/etc/passwd");
    refused(".");
    refused("");
    refused(42);
  });

  it("says to open the folder when none is open", () => {
    assert.throws(
      () => projectFile(undefined, "data/train.jsonl"),
      (e: TransportError) => e.status === 409 && /Open the project's folder/.test(e.message),
    );
  });
});
