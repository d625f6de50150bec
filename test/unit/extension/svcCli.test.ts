import assert from "node:assert/strict";
import path from "node:path";
import { resolveSvcCli } from "../../../extension/core/svcCli.js";

describe("extension/core/svcCli", () => {
  const exists = (files: string[]) => (file: string) => files.includes(file);

  it("prefers the workspace's node_modules/.bin/svc over PATH", () => {
    const local = path.join("/ws", "node_modules", ".bin", "svc");
    const found = resolveSvcCli("/ws", { PATH: "/usr/bin" }, exists([local, "/usr/bin/svc"]), "linux");
    assert.deepEqual(found, { command: [local], source: "workspace" });
  });

  it("falls back to svc on PATH", () => {
    const found = resolveSvcCli("/ws", { PATH: ["/opt/a", "/usr/bin"].join(path.delimiter) }, exists(["/usr/bin/svc"]), "linux");
    assert.deepEqual(found, { command: ["/usr/bin/svc"], source: "path" });
  });

  it("finds nothing when neither exists (the welcome view offers the install)", () => {
    assert.equal(resolveSvcCli("/ws", { PATH: "/usr/bin" }, exists([]), "linux"), undefined);
    assert.equal(resolveSvcCli(undefined, {}, exists([]), "linux"), undefined);
  });

  it("looks for svc.cmd on Windows", () => {
    const local = path.join("C:/ws", "node_modules", ".bin", "svc.cmd");
    assert.deepEqual(resolveSvcCli("C:/ws", {}, exists([local]), "win32")?.command, [local]);
  });
});
