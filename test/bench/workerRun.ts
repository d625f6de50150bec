/** Bench helper: a whole training run appended to a job the way a training worker does (the real worker link). */
import { readFileSync } from "node:fs";
import path from "node:path";
import WebSocket from "ws";

/** Connects as a worker, takes the job's assignment, sends started + `points` training.log + completed, waits for the last ack. */
export async function appendTrainingRun(cloud: { cloudUrl: string; ctx: { dataDir: string } }, jobId: string, points: number): Promise<void> {
  const workerToken = readFileSync(path.join(cloud.ctx.dataDir, "worker-token"), "utf8").trim();
  const ws = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${workerToken}` } });
  await new Promise((resolve) => ws.once("open", resolve));
  ws.send(JSON.stringify({ type: "hello", workerId: `bench-${jobId}`, name: "bench", holding: [] }));
  ws.send(JSON.stringify({ type: "ready" }));
  // Events carry the claim (fencing number) of the job's assignment.
  const claim = await new Promise<number>((resolve) =>
    ws.on("message", (raw) => {
      const m = JSON.parse(String(raw));
      if (m.type === "assign") resolve(m.claim);
    }),
  );
  const acked = new Promise<void>((resolve) =>
    ws.on("message", (raw) => {
      const m = JSON.parse(String(raw));
      if (m.type === "ack" && m.seq === points + 2) resolve();
    }),
  );
  const send = (seq: number, eventType: string, data: unknown) => ws.send(JSON.stringify({ type: "event", jobId, claim, seq, eventType, data }));
  send(1, "training.started", { model: "svc-tiny" });
  for (let step = 1; step <= points; step++) {
    const loss = 3 + Math.sin(step / 500) + 1 / Math.sqrt(step);
    send(step + 1, "training.log", step % 100 === 0 ? { step, loss, evalLoss: loss + 0.1 } : { step, loss });
  }
  send(points + 2, "training.completed", { artifacts: 0 });
  await acked;
  ws.close();
}
