import assert from "node:assert/strict";
import net from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { WorkerLink } from "../../../cloud/workers/link.js";
import { reconnectDelayMs } from "../../../cloud/workers/backoff.js";
import { freePort } from "../../support/ports.js";

/**
 * A worker that loses the cloud runs one reconnect loop with jittered exponential backoff. The
 * storm this guards against: a failed attempt both rejected into the backoff loop and fired
 * `close`, which started another loop, so loops doubled with each failure (23,000 attempts in 8 s).
 * The observation window is the only timing in these tests: the bound is on attempts, not on time.
 */
const WINDOW_MS = 3000;
/** 200 ms doubling with jitter makes about 5 attempts in 3 s; a storm makes thousands. */
const MAX_ATTEMPTS = 12;

function linkTo(cloudUrl: string, log: (line: string) => void): WorkerLink {
  return new WorkerLink({ cloudUrl, token: "x", workerId: "w-1", name: "w", holding: () => [], onMessage: () => {}, log });
}

describe("worker link: reconnecting after the cloud is gone", function () {
  this.timeout(20_000);

  it("knocks a handful of times, one socket at a time, on a listener that closes every connection", async () => {
    let attempts = 0;
    let open = 0;
    let maxOpen = 0;
    const server = net.createServer((socket) => {
      attempts += 1;
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      socket.on("close", () => (open -= 1));
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const link = linkTo(`http://127.0.0.1:${port}`, () => {});
    void link.connect();
    await delay(WINDOW_MS);
    link.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.ok(attempts >= 2, `expected the link to retry, saw ${attempts} attempts`);
    assert.ok(attempts <= MAX_ATTEMPTS, `${attempts} connection attempts in ${WINDOW_MS} ms: more than one reconnect loop runs`);
    assert.ok(maxOpen <= 2, `${maxOpen} sockets were open at once`);
  });

  it("knocks a handful of times on a closed port, and close() ends the loop", async () => {
    const port = await freePort();
    const failures: string[] = [];
    const link = linkTo(`http://127.0.0.1:${port}`, (line) => failures.push(line));
    const loop = link.connect();
    await delay(WINDOW_MS);
    link.close();
    await loop; // resolves: a closed link stops retrying at once, even mid-backoff
    assert.ok(failures.length >= 2, `expected retries, saw ${failures.length}`);
    assert.ok(failures.length <= MAX_ATTEMPTS, `${failures.length} attempts in ${WINDOW_MS} ms`);
    assert.match(failures[0], /ECONNREFUSED.*retrying in \d+ ms/);
  });

  it("spreads the delays: exponential steps from 200 ms to 10 s, each jittered within its upper half", () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((a) => reconnectDelayMs(a, () => 1)),
      [200, 400, 800, 1600],
    );
    assert.deepEqual(
      [0, 1, 2, 3].map((a) => reconnectDelayMs(a, () => 0)),
      [100, 200, 400, 800],
    );
    assert.equal(
      reconnectDelayMs(40, () => 1),
      10_000,
    );
  });
});
