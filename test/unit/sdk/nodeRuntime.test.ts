import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { nodeExecutable } from "../../../sdk/nodeRuntime.js";

describe("sdk/nodeRuntime: never VS Code's Electron as Node", () => {
  const electron = { ...process.versions, electron: "34.2.0" } as NodeJS.ProcessVersions;
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), "svc-node-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("under Node, the running Node", () => {
    assert.equal(nodeExecutable({ PATH: "" }, { ...process.versions, electron: undefined } as unknown as NodeJS.ProcessVersions), process.execPath);
  });

  it("under Electron, the first executable `node` on PATH, skipping non-executable ones", () => {
    const notExecutable = path.join(dir, "a");
    const bin = path.join(dir, "b");
    for (const d of [notExecutable, bin]) {
      rmSync(d, { recursive: true, force: true });
      mkdirSync(d);
    }
    writeFileSync(path.join(notExecutable, "node"), "");
    writeFileSync(path.join(bin, "node"), "#!/bin/sh\n");
    chmodSync(path.join(bin, "node"), 0o755);
    assert.equal(nodeExecutable({ PATH: [notExecutable, bin].join(path.delimiter) }, electron, "linux"), path.join(bin, "node"));
  });

  it("under Electron, SVC_NODE wins", () => {
    assert.equal(nodeExecutable({ PATH: "", SVC_NODE: "/opt/node/bin/node" }, electron), "/opt/node/bin/node");
  });

  it("under Electron with no node anywhere, a clear error", () => {
    assert.throws(() => nodeExecutable({ PATH: dir }, electron), /needs Node\.js 20\.15 or later .* VS Code.s own runtime \(Electron\).* SVC_NODE/);
  });
});
