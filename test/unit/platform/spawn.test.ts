import assert from "node:assert/strict";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import path from "node:path";
import { resolveSvcCli } from "../../../extension/core/svcCli.js";
import { nodeScriptCommand, spawnNodeCommand, type SpawnFunction } from "../../../sdk/platform/nodeChild.js";
import { defaultSvcCommand, spawnSvc } from "../../../studio/svcCommand.js";

/** Records what would be spawned, for another OS's command line; never starts anything. */
function spawnRecorder(): { spawnFn: SpawnFunction; calls: { file: string; args: readonly string[]; options: SpawnOptions }[] } {
  const calls: { file: string; args: readonly string[]; options: SpawnOptions }[] = [];
  return { calls, spawnFn: (file, args, options) => (calls.push({ file, args, options }), {} as ChildProcess) };
}

describe("platform: the CLI always runs as node <cli.mjs>, without a shell or a console window", () => {
  it("the studio spawns `svc start` as node + cli.mjs with an IPC channel for the stop request", () => {
    const { spawnFn, calls } = spawnRecorder();
    spawnSvc(defaultSvcCommand(), ["start"], "/proj", {}, spawnFn);
    const [call] = calls;
    assert.equal(call.file, process.execPath);
    assert.equal(path.basename(call.args[0]), "cli.mjs");
    assert.deepEqual(call.args.slice(1), ["start"]);
    assert.deepEqual(call.options.stdio, ["ignore", "pipe", "pipe", "ipc"]);
    assert.equal(call.options.shell, false);
    assert.equal(call.options.windowsHide, true);
  });

  it("a TypeScript entry runs through tsx, a built one directly", () => {
    assert.deepEqual(nodeScriptCommand("/a/main.ts", "node"), ["node", "--import", "tsx", "/a/main.ts"]);
    assert.deepEqual(nodeScriptCommand("/a/main.mjs", "node"), ["node", "/a/main.mjs"]);
    const { spawnFn, calls } = spawnRecorder();
    spawnNodeCommand(["node", "/a/main.mjs"], ["x"], { shell: true }, spawnFn);
    assert.equal(calls[0].options.shell, false, "a caller cannot turn the shell back on");
  });

  describe("the extension finds the CLI's script, never the .cmd shim Windows cannot spawn", () => {
    const exists = (files: string[]) => (file: string) => files.includes(file);
    const node = () => "C:\\Program Files\\nodejs\\node.exe";

    it("Windows, the workspace's own package", () => {
      const script = "C:\\ws\\node_modules\\svc-studio\\dist\\cli.mjs";
      const found = resolveSvcCli("C:\\ws", { platform: "win32", env: {}, node, exists: exists([script, "C:\\ws\\node_modules\\.bin\\svc.cmd"]) });
      assert.deepEqual(found, { command: [node(), script], source: "workspace" });
    });

    it("Windows, a global install on PATH (npm's prefix holds svc.cmd next to node_modules\\svc-studio)", () => {
      const prefix = "C:\\Users\\ada\\AppData\\Roaming\\npm";
      const script = `${prefix}\\node_modules\\svc-studio\\dist\\cli.mjs`;
      const found = resolveSvcCli("C:\\ws", {
        platform: "win32",
        env: { Path: `C:\\Windows;${prefix}` },
        node,
        exists: exists([`${prefix}\\svc.cmd`, script]),
      });
      assert.deepEqual(found, { command: [node(), script], source: "path" });
    });

    it("macOS and Linux: the workspace first, else the script a global bin/svc links to", () => {
      const local = "/ws/node_modules/svc-studio/dist/cli.mjs";
      const onPath = { platform: "darwin" as const, env: { PATH: "/opt/homebrew/bin:/usr/bin" }, node: () => "/opt/homebrew/bin/node" };
      assert.deepEqual(resolveSvcCli("/ws", { ...onPath, exists: exists([local, "/usr/bin/svc"]), realpath: () => assert.fail("not needed") })?.command, [
        "/opt/homebrew/bin/node",
        local,
      ]);
      const linked = "/opt/homebrew/lib/node_modules/svc-studio/dist/cli.mjs";
      const found = resolveSvcCli("/ws", {
        ...onPath,
        exists: exists(["/opt/homebrew/bin/svc"]),
        realpath: (f) => (f === "/opt/homebrew/bin/svc" ? linked : f),
      });
      assert.deepEqual(found, { command: ["/opt/homebrew/bin/node", linked], source: "path" });
    });

    it("macOS and Linux: a workspace's node_modules/.bin/svc link runs its target under node; a shell shim runs as itself", () => {
      const base = { platform: "linux" as const, env: { PATH: "" }, node: () => "/usr/bin/node" };
      const target = "/repo/dist/cli.mjs";
      assert.deepEqual(resolveSvcCli("/ws", { ...base, exists: exists(["/ws/node_modules/.bin/svc"]), realpath: () => target })?.command, [
        "/usr/bin/node",
        target,
      ]);
      assert.deepEqual(resolveSvcCli("/ws", { ...base, exists: exists(["/ws/node_modules/.bin/svc"]), realpath: (f) => f })?.command, [
        "/ws/node_modules/.bin/svc",
      ]);
    });

    it("Windows never runs the workspace's .bin shims", () => {
      const found = resolveSvcCli("C:\\ws", {
        platform: "win32",
        env: {},
        node,
        exists: exists(["C:\\ws\\node_modules\\.bin\\svc.cmd", "C:\\ws\\node_modules\\.bin\\svc"]),
        realpath: (f) => f,
      });
      assert.equal(found, undefined);
    });

    it("nothing installed: nothing found (the welcome view offers the install)", () => {
      assert.equal(resolveSvcCli("/ws", { platform: "linux", env: { PATH: "/usr/bin" }, node: () => "node", exists: exists([]) }), undefined);
      assert.equal(resolveSvcCli(undefined, { platform: "win32", env: {}, node: () => "node", exists: exists([]) }), undefined);
    });
  });
});
