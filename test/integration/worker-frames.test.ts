/**
 * Malformed worker frames: a raw WebSocket client holding the real worker token sends frames of
 * every wrong shape to a real cloud process. Each costs only its own link, closed with code 1008
 * and a reason that names what is wrong; the cloud stays up and a well-formed worker still gets
 * its job. (A `holding` that was not an array threw inside the socket's listener and killed the cloud.)
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import WebSocket from "ws";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { TestWorker } from "../support/worker.js";

const hello = { type: "hello", workerId: "w-raw", name: "w-raw", holding: [] };
const event = { type: "event", jobId: "j1", claim: 1, seq: 1, eventType: "training.log", data: {} };

/** [what is wrong, the frames sent on one link (the last one is the malformed one), what the reason must say] */
const CASES: [string, (string | Buffer)[], RegExp][] = [
  ["not JSON", ["{nope"], /must be JSON/],
  ["empty text", [""], /must be JSON/],
  ["binary garbage", [Buffer.from([0xff, 0x00, 0xfe, 0x7b])], /must be JSON/],
  ["null", ["null"], /JSON object/],
  ["a number", ["42"], /JSON object/],
  ["a string", ['"hello"'], /JSON object/],
  ["an array", ['[{"type":"hello"}]'], /JSON object/],
  ["no type", ["{}"], /unknown frame type/],
  ["type a number", ['{"type":7}'], /unknown frame type 7/],
  ["unknown type", ['{"type":"launch"}'], /unknown frame type "launch"/],
  ["hello: holding a string", [JSON.stringify({ ...hello, holding: "job-1" })], /hello frame: holding/],
  ["hello: holding a number", [JSON.stringify({ ...hello, holding: 5 })], /hello frame: holding/],
  ["hello: holding null", [JSON.stringify({ ...hello, holding: null })], /hello frame: holding/],
  ["hello: holding an object", [JSON.stringify({ ...hello, holding: { 0: "a" } })], /hello frame: holding/],
  ["hello: holding numbers", [JSON.stringify({ ...hello, holding: [1, 2] })], /hello frame: holding\.0/],
  ["hello: no holding", [JSON.stringify({ type: "hello", workerId: "w", name: "w" })], /hello frame: holding/],
  ["hello: workerId a number", [JSON.stringify({ ...hello, workerId: 12 })], /hello frame: workerId/],
  ["hello: workerId empty", [JSON.stringify({ ...hello, workerId: "" })], /hello frame: workerId/],
  ["hello: name an object", [JSON.stringify({ ...hello, name: { first: "x" } })], /hello frame: name/],
  ["hello: devices not a list", [JSON.stringify({ ...hello, devices: "cuda" })], /hello frame: devices/],
  [
    "hello: a device of an unknown kind",
    [JSON.stringify({ ...hello, devices: [{ kind: "tpu", name: "v5e", memoryBytes: null, count: 1 }] })],
    /hello frame: devices\.0\.kind/,
  ],
  [
    "hello: a device count of 0",
    [JSON.stringify({ ...hello, devices: [{ kind: "cpu", name: "x", memoryBytes: 1, count: 0 }] })],
    /hello frame: devices\.0\.count/,
  ],
  ["hello: backends a string", [JSON.stringify({ ...hello, backends: "torch" })], /hello frame: backends/],
  ["event: seq a string", [JSON.stringify(hello), JSON.stringify({ ...event, seq: "1" })], /event frame: seq/],
  ["event: seq 0", [JSON.stringify(hello), JSON.stringify({ ...event, seq: 0 })], /event frame: seq/],
  ["event: seq fractional", [JSON.stringify(hello), JSON.stringify({ ...event, seq: 1.5 })], /event frame: seq/],
  ["event: claim negative", [JSON.stringify(hello), JSON.stringify({ ...event, claim: -1 })], /event frame: claim/],
  ["event: no claim", [JSON.stringify(hello), JSON.stringify({ ...event, claim: undefined })], /event frame: claim/],
  ["event: jobId null", [JSON.stringify(hello), JSON.stringify({ ...event, jobId: null })], /event frame: jobId/],
  [
    "event: unknown eventType",
    [JSON.stringify(hello), JSON.stringify({ ...event, eventType: "training.exploded" })],
    /event frame: eventType is not one of the allowed values/,
  ],
  ["event: data null", [JSON.stringify(hello), JSON.stringify({ ...event, data: null })], /event frame: data/],
  ["event: data an array", [JSON.stringify(hello), JSON.stringify({ ...event, data: [1] })], /event frame: data/],
  ["event: data a string", [JSON.stringify(hello), JSON.stringify({ ...event, data: "x" })], /event frame: data/],
  ["event before hello, malformed", [JSON.stringify({ ...event, seq: -3 })], /event frame: seq/],
  ["ready: then garbage", [JSON.stringify(hello), '{"type":"ready"}', '{"type":"ready","x":'], /must be JSON/],
];

describe("worker link: malformed frames", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  let token: string;
  before(async () => {
    cloud = await startTestCloud();
    token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
  });
  after(async () => {
    await cloud?.dispose();
  });

  /** Opens a raw link, sends the frames, and resolves with how the cloud closed it. */
  async function closeOf(frames: (string | Buffer)[]): Promise<{ code: number; reason: string }> {
    const socket = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${token}` } });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    for (const frame of frames) socket.send(frame);
    return closed;
  }

  for (const [what, frames, reason] of CASES) {
    it(`${what}: the link closes with a reason, the cloud stays up`, async () => {
      const closed = await closeOf(frames);
      assert.equal(closed.code, 1008, `closed with ${closed.code} ${closed.reason}`);
      assert.match(closed.reason, reason);
      assert.equal(cloud.process.exitCode, null, `the cloud exited:\n${cloud.stderr()}`);
      const ready = await fetch(`${cloud.cloudUrl}/readyz`);
      assert.equal(ready.status, 200);
    });
  }

  it("after all of them, a well-formed worker still gets its job", async () => {
    assert.ok(CASES.length >= 30, "many shapes are tried");
    const alice = await newAccount(cloud);
    const job = await alice.client.createJob({ name: "after-garbage", config: { maxSteps: 1 } });
    const worker = await TestWorker.connect(cloud, "w-good");
    try {
      worker.send({ type: "ready" });
      const assign = await worker.next((m): m is Extract<CloudMessage, { type: "assign" }> => m.type === "assign");
      assert.equal(assign.job.id, job.id);
      const answer = await worker.emit(job.id, 1, "training.started", {});
      assert.equal(answer.type, "ack");
    } finally {
      worker.close();
    }
  });
});
