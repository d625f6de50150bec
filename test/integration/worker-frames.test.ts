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
import { pollUntil } from "../support/poll.js";
import { TestWorker } from "../support/worker.js";

const hello = { type: "hello", workerId: "w-raw", name: "w-raw", holding: [] };
const event = { type: "event", jobId: "j1", claim: 1, seq: 1, eventType: "training.log", data: {} };
const device = { type: "cuda", names: ["NVIDIA H100 80GB HBM3"], vramTotalBytes: 85e9, vramFreeBytes: 80e9 };
const llama = (fields: Record<string, unknown>) => JSON.stringify({ type: "llama", device: { ...device, ...fields } });

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
  ["llama: no device", [JSON.stringify(hello), '{"type":"llama"}'], /llama frame: device/],
  ["llama: device a string", [JSON.stringify(hello), '{"type":"llama","device":"cuda"}'], /llama frame: device/],
  ["llama: type a number", [JSON.stringify(hello), llama({ type: 1 })], /llama frame: device\.type/],
  ["llama: type empty", [JSON.stringify(hello), llama({ type: "" })], /llama frame: device\.type/],
  ["llama: names a string", [JSON.stringify(hello), llama({ names: "H100" })], /llama frame: device\.names/],
  ["llama: a name a number", [JSON.stringify(hello), llama({ names: [100] })], /llama frame: device\.names\.0/],
  ["llama: free memory negative", [JSON.stringify(hello), llama({ vramFreeBytes: -1 })], /llama frame: device\.vramFreeBytes/],
  ["llama: total memory a string", [JSON.stringify(hello), llama({ vramTotalBytes: "80 GB" })], /llama frame: device\.vramTotalBytes/],
  ["llama: no total memory", [JSON.stringify(hello), llama({ vramTotalBytes: undefined })], /llama frame: device\.vramTotalBytes/],
  ["llama: fallback reason a number", [JSON.stringify(hello), llama({ fallbackReason: 3 })], /llama frame: device\.fallbackReason/],
  ["llama: fallback reason too long", [JSON.stringify(hello), llama({ fallbackReason: "x".repeat(5000) })], /llama frame: device\.fallbackReason/],
  ["state: no uploading", [JSON.stringify(hello), '{"type":"state"}'], /state frame: uploading/],
  ["state: uploading a string", [JSON.stringify(hello), '{"type":"state","uploading":"j1"}'], /state frame: uploading/],
  ["state: uploading numbers", [JSON.stringify(hello), '{"type":"state","uploading":[1]}'], /state frame: uploading\.0/],
  ["state: uploading an empty id", [JSON.stringify(hello), '{"type":"state","uploading":[""]}'], /state frame: uploading\.0/],
  ["state: released a string", [JSON.stringify(hello), '{"type":"state","uploading":[],"released":"j1"}'], /state frame: released/],
  ["state: released numbers", [JSON.stringify(hello), '{"type":"state","uploading":[],"released":[7]}'], /state frame: released\.0/],
  ["state before hello, malformed", ['{"type":"state","uploading":null}'], /state frame: uploading/],
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

  it("a hello is answered with a welcome naming the optional frames; well-formed llama and state frames are listed", async () => {
    const alice = await newAccount(cloud);
    const worker = await TestWorker.connect(cloud, "w-states");
    try {
      const welcome = await worker.next((m): m is Extract<CloudMessage, { type: "welcome" }> => m.type === "welcome");
      assert.deepEqual(welcome.frames.toSorted(), ["llama", "state"]);
      worker.send({ type: "llama", device });
      const listed = await pollUntil(async () => (await alice.client.listWorkers()).find((w) => w.name === "w-states" && w.llamaDevice), {
        timeoutMs: 10_000,
        description: "the worker's llama.cpp device listed",
      });
      assert.deepEqual(listed.llamaDevice, device);
      const job = await alice.client.createJob({ name: "states", config: { maxSteps: 1 } });
      worker.send({ type: "ready" });
      await worker.next((m): m is Extract<CloudMessage, { type: "assign" }> => m.type === "assign" && m.job.id === job.id);
      worker.send({ type: "state", uploading: [job.id] });
      const uploading = await pollUntil(async () => (await alice.client.listWorkers()).find((w) => w.name === "w-states" && w.state === "uploading"), {
        timeoutMs: 10_000,
        description: "the worker listed as uploading",
      });
      assert.deepEqual(uploading.jobIds, [job.id]);
      worker.send({ type: "state", uploading: [] });
      await pollUntil(async () => (await alice.client.listWorkers()).find((w) => w.name === "w-states")?.state === "training", {
        timeoutMs: 10_000,
        description: "the worker listed as training again",
      });
      await alice.client.cancelJob(job.id);
    } finally {
      worker.close();
    }
  });

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
