/**
 * The inference child when the cloud goes away under it (SIGKILL, a crash): it must shut down
 * quietly with exit code 0, at start-up and in the middle of a generation alike, not die of an
 * unhandled ERR_IPC_CHANNEL_CLOSED with a stack trace on the cloud's terminal.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { CHILD_ENV } from "../../../cloud/inference/worker/inferenceChild.js";
import type { FromWorker, ToWorker } from "../../../cloud/inference/worker/protocol.js";
import { stopChild } from "../../../sdk/platform/stop.js";

const root = path.resolve(import.meta.dirname, "../../..");
const childMain = path.join(root, "cloud/inference/worker/inferenceChild.ts");
const settings = { threads: 1, maxModelBytes: 1 << 30, maxContexts: 2, contextsPerModel: 1 };

function startChild(): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", childMain], {
    cwd: root,
    env: { ...process.env, [CHILD_ENV]: JSON.stringify(settings) },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  return { child, stderr: () => stderr };
}

async function exitOf(child: ChildProcess): Promise<number | null> {
  const [code] = (await once(child, "exit")) as [number | null];
  return code;
}

describe("inference child: the cloud goes away", function () {
  this.timeout(60_000);

  it("exits quietly when the cloud is gone before the child is ready", async () => {
    const { child, stderr } = startChild();
    const exited = exitOf(child);
    child.disconnect();
    assert.equal(await exited, 0, stderr());
    assert.doesNotMatch(stderr(), /ERR_IPC_CHANNEL_CLOSED|Error/);
  });

  it("stops its generation and exits quietly when the cloud is gone mid-stream", async () => {
    const { child, stderr } = startChild();
    const exited = exitOf(child);
    await firstTextOf(child);
    child.disconnect();
    assert.equal(await exited, 0, stderr());
    assert.doesNotMatch(stderr(), /ERR_IPC_CHANNEL_CLOSED|Error/);
  });

  it("the cloud's drain request (its stop on Windows, where a signal kills) ends a generation and the child, no signal sent; the log names llama.cpp's device", async () => {
    const { child, stderr } = startChild();
    await firstTextOf(child);
    assert.equal(await stopChild(child, { graceMs: 30_000, platform: "win32" }), "drained", stderr());
    assert.equal(child.exitCode, 0, stderr());
    assert.match(stderr(), /svc cloud: llama\.cpp runs on (cpu|metal|cuda|vulkan)\b[^\n]*\n/);
  });
});

/** Asks for a long generation once the child is ready, and resolves at its first text. */
function firstTextOf(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    child.on("message", (message: FromWorker) => {
      if (message.type === "ready") {
        const generate: ToWorker = {
          type: "generate",
          id: 1,
          modelPath: path.join(root, "models/svc-tiny.gguf"),
          adapterPath: null,
          params: { messages: [{ role: "user", content: "Tell me about cats." }], maxTokens: 200, temperature: 1 },
        };
        child.send(generate);
      } else if (message.type === "text") {
        resolve();
      }
    });
  });
}
