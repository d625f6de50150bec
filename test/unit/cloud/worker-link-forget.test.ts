import assert from "node:assert/strict";
import { WebSocketServer, type WebSocket } from "ws";
import { WorkerLink } from "../../../cloud/workers/link.js";
import type { CloudMessage, WorkerMessage } from "../../../cloud/workers/protocol.js";
import { pollUntil } from "../../support/poll.js";

/**
 * A long-lived worker keeps nothing for jobs it finished: a job that ended while some of its
 * events were still unacknowledged (the cloud was slow or away) is dropped once the cloud has
 * answered them, not kept for the life of the worker. The "cloud" is a real WebSocket server on
 * loopback that acknowledges when the test says so.
 */
describe("worker link: a finished job's state goes once its events are answered", () => {
  it("keeps nothing for a job forgotten before its last ack", async () => {
    const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    const frames: WorkerMessage[] = [];
    let cloudSide: WebSocket | undefined;
    server.on("connection", (socket) => {
      cloudSide = socket;
      socket.on("message", (raw) => frames.push(JSON.parse(String(raw))));
    });
    const { port } = server.address() as { port: number };
    const link = new WorkerLink({ cloudUrl: `http://127.0.0.1:${port}`, token: "x", workerId: "w-1", name: "w", holding: () => [], onMessage: () => {} });
    try {
      await link.connect();
      const send = (message: CloudMessage) => cloudSide!.send(JSON.stringify(message));
      const acked = [1, 2, 3].map((n) => link.emit("job-1", "training.log", { step: n }));
      await pollUntil(() => (frames.filter((f) => f.type === "event").length === 3 ? true : undefined), { timeoutMs: 5000, description: "three event frames" });
      link.forget("job-1"); // the job ended here; its events are still unanswered
      assert.equal(link.trackedJobs(), 1, "kept until the cloud answers");
      send({ type: "ack", jobId: "job-1", seq: 3 });
      await Promise.all(acked);
      await pollUntil(() => (link.trackedJobs() === 0 ? true : undefined), { timeoutMs: 5000, description: "the job's state to go" });
    } finally {
      link.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
