/**
 * The frames a worker adds after hello (llama.cpp's device, the jobs it uploads) reach only a hub that named them in
 * its welcome: an older hub closes a link on a frame type it does not know, and the worker would reconnect and send it
 * again, forever. The hubs here are stand-ins on a real WebSocket listener: one from before the welcome (this
 * version's hub always welcomes), and one that welcomes, to which the worker says it all again after a reconnect.
 */
import assert from "node:assert/strict";
import { WebSocketServer, type WebSocket } from "ws";
import { WorkerLink } from "../../../cloud/workers/link.js";
import type { WorkerMessage } from "../../../cloud/workers/protocol.js";
import { pollUntil } from "../../support/poll.js";

const device = { type: "cpu", names: [], vramTotalBytes: 0, vramFreeBytes: 0, fallbackReason: "no CUDA, Vulkan or Metal driver found on this machine" };

/** A hub stand-in: records every frame; welcomes each hello with `frames`, or (null) says nothing, as hubs before the welcome did. */
async function standInHub(frames: string[] | null) {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const received: WorkerMessage[] = [];
  const sockets: WebSocket[] = [];
  server.on("connection", (socket) => {
    sockets.push(socket);
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as WorkerMessage;
      received.push(message);
      if (message.type === "hello" && frames) socket.send(JSON.stringify({ type: "welcome", frames }));
    });
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** Drops every open link, as a restarting cloud does. */
    drop: () => sockets.splice(0).forEach((socket) => socket.terminate()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const linkTo = (cloudUrl: string) =>
  new WorkerLink({ cloudUrl, token: "x", workerId: "w-1", name: "w", holding: () => ["job-1"], onMessage: () => {}, log: () => {} });

describe("worker link: optional frames only to a hub that welcomed them", function () {
  this.timeout(20_000);

  it("sends an older hub nothing but hello, ready and events", async () => {
    const hub = await standInHub(null);
    const link = linkTo(hub.url);
    try {
      link.uploading("job-1", true);
      await link.connect();
      link.llamaDevice(device);
      link.uploading("job-1", false);
      link.ready();
      await pollUntil(() => hub.received.some((m) => m.type === "ready"), { timeoutMs: 5000, description: "the ready frame" });
      assert.deepEqual(
        hub.received.map((m) => m.type),
        ["hello", "ready"],
      );
    } finally {
      link.close();
      await hub.close();
    }
  });

  it("tells a welcoming hub its device and uploads, and again after a reconnect", async () => {
    const hub = await standInHub(["llama", "state"]);
    const link = linkTo(hub.url);
    try {
      link.uploading("job-1", true);
      await link.connect();
      await pollUntil(() => hub.received.some((m) => m.type === "state"), { timeoutMs: 5000, description: "the state frame after the welcome" });
      link.llamaDevice(device);
      await pollUntil(() => hub.received.some((m) => m.type === "llama"), { timeoutMs: 5000, description: "the llama frame" });
      assert.deepEqual(hub.received.slice(1), [
        { type: "state", uploading: ["job-1"] },
        { type: "llama", device },
      ]);

      hub.received.length = 0;
      hub.drop();
      await pollUntil(() => hub.received.filter((m) => m.type !== "hello").length >= 2, {
        timeoutMs: 10_000,
        description: "the frames again after a reconnect",
      });
      assert.deepEqual(
        hub.received.map((m) => m.type),
        ["hello", "llama", "state"],
      );
      link.uploading("job-1", false);
      await pollUntil(() => hub.received.length === 4, { timeoutMs: 5000, description: "the state frame with no upload" });
      assert.deepEqual(hub.received[3], { type: "state", uploading: [] });
      // A job the hello held, delivered over HTTP: released once, not again with the next state.
      link.delivered("job-1");
      link.uploading("job-2", true);
      await pollUntil(() => hub.received.length === 6, { timeoutMs: 5000, description: "the release and the next state" });
      assert.deepEqual(hub.received.slice(4), [
        { type: "state", uploading: [], released: ["job-1"] },
        { type: "state", uploading: ["job-2"] },
      ]);
    } finally {
      link.close();
      await hub.close();
    }
  });
});
