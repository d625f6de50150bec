import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { createTempDir } from "../support/tmp.js";
import { cliPath } from "../support/cloud.js";

/**
 * The repro as a test: a real `svc worker` process pointed at a cloud that closes every
 * connection. One reconnect loop with backoff makes a handful of attempts; the storm made
 * thousands and exhausted file descriptors. The window is the only timing: the bound is on attempts.
 */
describe("svc worker: a lost cloud gets a handful of reconnect attempts, not a storm", function () {
  this.timeout(30_000);

  it("knocks at most a few times a second, one socket at a time", async () => {
    const workDir = await createTempDir("worker-reconnect");
    let attempts = 0;
    let open = 0;
    let maxOpen = 0;
    const server = net.createServer((socket) => {
      attempts += 1;
      maxOpen = Math.max(maxOpen, ++open);
      socket.on("close", () => (open -= 1));
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const worker = spawn(process.execPath, [cliPath, "worker", "--cloud", `http://127.0.0.1:${port}`, "--name", "w", "--work-dir", workDir.path], {
      env: { ...process.env, SVC_WORKER_TOKEN: "x" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise((resolve) => worker.on("exit", resolve));
    try {
      await delay(4000);
    } finally {
      worker.kill("SIGKILL");
      await exited;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await workDir.remove();
    }
    assert.ok(attempts >= 2, `expected retries, saw ${attempts}`);
    assert.ok(attempts <= 15, `${attempts} connection attempts in 4 s`);
    assert.ok(maxOpen <= 2, `${maxOpen} sockets open at once`);
  });
});
