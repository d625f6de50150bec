/**
 * Cloud benchmarks (issues 2 and 15), each beside a baseline measured in the same run:
 * - event append + SSE fan-out (events/s through the worker link into the store and out to
 *   subscribers) vs raw SQLite inserts, one transaction each, same pragmas (goal: ≥ 0.5×);
 * - `GET /v1/jobs` with 10,000 jobs vs a bare Fastify route streaming the same bytes from a
 *   static file (goal: ≤ 10×);
 * - authenticated request latency (bearer-token lookup) vs a bare Fastify route.
 */
import { createReadStream, mkdtempSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import Fastify from "fastify";
import WebSocket from "ws";
import { startCloud } from "../../cloud/serve.js";
import { CloudClient } from "../../sdk/client.js";
import { latencies, percentile, report } from "./stats.js";

const EVENTS = 3000;
const SUBSCRIBERS = 10;
const JOBS = 10_000;

async function rawSqliteInsertRate(dir: string): Promise<number> {
  const db = new Database(path.join(dir, `raw-${Math.random().toString(36).slice(2)}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("create table e (job_id text, seq integer, type text, data text, created_at text, primary key (job_id, seq))");
  const insert = db.prepare("insert into e values (?, ?, ?, ?, ?)");
  const t = performance.now();
  for (let i = 1; i <= EVENTS; i++)
    db.transaction(() => insert.run("job", i, "training.log", JSON.stringify({ step: i, loss: 1 / i }), new Date().toISOString()))();
  const rate = EVENTS / ((performance.now() - t) / 1000);
  db.close();
  return rate;
}

/** One job's events through the worker link, with `subscribers` SSE readers of the job in the same process. */
async function eventPipelineRate(dir: string, subscribers: number): Promise<{ stored: number; delivered: number }> {
  const cloud = await startCloud({ dataDir: path.join(dir, `cloud-${subscribers}-${Math.random().toString(36).slice(2)}`), port: 0, edgePort: 0 });
  try {
    const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
    const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
    const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
    const job = await client.createJob({ name: "bench", config: { maxSteps: 1 } });
    const workerToken = readFileSync(path.join(cloud.ctx.dataDir, "worker-token"), "utf8").trim();
    const ws = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${workerToken}` } });
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "hello", workerId: "bench", name: "bench", holding: [] }));
    ws.send(JSON.stringify({ type: "ready" }));
    // Events carry the claim (fencing number) of the job's assignment.
    const claim = await new Promise<number>((resolve) => {
      const onAssign = (raw: WebSocket.RawData) => {
        const m = JSON.parse(String(raw));
        if (m.type === "assign") {
          ws.off("message", onAssign);
          resolve(m.claim);
        }
      };
      ws.on("message", onAssign);
    });

    const readers = Array.from({ length: subscribers }, async () => {
      let count = 0;
      for await (const _event of client.jobEvents(job.id)) {
        count += 1;
        if (count === EVENTS) return performance.now();
      }
      return performance.now();
    });
    const allAcked = new Promise<number>((resolve) =>
      ws.on("message", (raw) => {
        const m = JSON.parse(String(raw));
        if (m.type === "ack" && m.seq === EVENTS) resolve(performance.now());
      }),
    );
    const t = performance.now();
    ws.send(JSON.stringify({ type: "event", jobId: job.id, claim, seq: 1, eventType: "training.started", data: {} }));
    for (let seq = 2; seq <= EVENTS; seq++) {
      ws.send(JSON.stringify({ type: "event", jobId: job.id, claim, seq, eventType: "training.log", data: { step: seq, loss: 1 / seq } }));
    }
    const storedAt = await allAcked;
    const deliveredAt = Math.max(storedAt, ...(await Promise.all(readers)));
    ws.close();
    return { stored: EVENTS / ((storedAt - t) / 1000), delivered: (EVENTS * subscribers) / ((deliveredAt - t) / 1000) };
  } finally {
    await cloud.close();
  }
}

/** p50 of `GET /v1/jobs` over 10,000 jobs, and of a bare Fastify route streaming the same bytes from a file. */
async function jobListLatency(dir: string): Promise<{ list50: number; file50: number; bytes: number }> {
  const cloud = await startCloud({ dataDir: path.join(dir, "cloud3"), port: 0, edgePort: 0 });
  const bare = Fastify();
  const file = path.join(dir, "jobs.json");
  bare.get("/", (_request, reply) => reply.type("application/json; charset=utf-8").send(createReadStream(file)));
  await bare.listen({ port: 0, host: "127.0.0.1" });
  try {
    const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
    const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
    const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
    for (let i = 0; i < JOBS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, k) => client.createJob({ name: `job ${i + k}`, config: { model: "svc-tiny", maxSteps: 1, seed: 1 + ((i + k) % 3) } })),
      );
    }
    const url = `${cloud.cloudUrl}/v1/jobs?projectId=${project.id}`;
    const body = Buffer.from(await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer());
    writeFileSync(file, body);
    const list = () => fetch(url, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer());
    const address = bare.server.address() as { port: number };
    const plain = () => fetch(`http://127.0.0.1:${address.port}/`).then((r) => r.arrayBuffer());
    // Interleaved rounds, so a burst of load from elsewhere hits both sides alike.
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < 5; round++) {
      a.push(...(await latencies(list, 10, round === 0 ? 5 : 0)));
      b.push(...(await latencies(plain, 10, round === 0 ? 5 : 0)));
    }
    return {
      list50: percentile(
        a.sort((x, y) => x - y),
        50,
      ),
      file50: percentile(
        b.sort((x, y) => x - y),
        50,
      ),
      bytes: body.byteLength,
    };
  } finally {
    await bare.close();
    await cloud.close();
  }
}

async function authLatency(dir: string): Promise<{ p50: number; p99: number; bare50: number; bare99: number }> {
  const cloud = await startCloud({ dataDir: path.join(dir, "cloud2"), port: 0, edgePort: 0 });
  const bare = Fastify();
  bare.get("/", async () => ({ ok: true }));
  await bare.listen({ port: 0, host: "127.0.0.1" });
  try {
    const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
    const me = () => fetch(`${cloud.cloudUrl}/v1/projects`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer());
    const address = bare.server.address() as { port: number };
    const plain = () => fetch(`http://127.0.0.1:${address.port}/`).then((r) => r.arrayBuffer());
    const a = await latencies(me, 2000);
    const b = await latencies(plain, 2000);
    return { p50: percentile(a, 50), p99: percentile(a, 99), bare50: percentile(b, 50), bare99: percentile(b, 99) };
  } finally {
    await bare.close();
    await cloud.close();
  }
}

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-"));
try {
  // Best of 3 for each side, alternating, so a burst of load from elsewhere does not decide the ratio.
  const raws: number[] = [];
  const alone: number[] = [];
  for (let i = 0; i < 3; i++) {
    raws.push(await rawSqliteInsertRate(dir));
    alone.push((await eventPipelineRate(dir, 0)).stored);
  }
  const raw = Math.max(...raws);
  report("event append via worker link (stored)", Math.max(...alone), "ev/s", "raw SQLite insert", raw);
  const pipeline = await eventPipelineRate(dir, SUBSCRIBERS);
  report(`  same, with ${SUBSCRIBERS} SSE readers in-process`, pipeline.stored, "ev/s", "raw SQLite insert", raw);
  report(`SSE fan-out to ${SUBSCRIBERS} subscribers (delivered)`, pipeline.delivered, "ev/s", "raw SQLite insert", raw);
  const jobList = await jobListLatency(dir);
  report(`GET /v1/jobs, ${JOBS} jobs (${(jobList.bytes / 1e6).toFixed(2)} MB), p50`, jobList.list50, "ms", "static file p50", jobList.file50, false);
  const auth = await authLatency(dir);
  report("authenticated request p50 (token lookup)", auth.p50, "ms", "bare Fastify p50", auth.bare50, false);
  report("authenticated request p99 (token lookup)", auth.p99, "ms", "bare Fastify p99", auth.bare99, false);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
