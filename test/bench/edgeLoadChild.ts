/**
 * The out-of-process half of the edge benchmark (edge.bench.ts forks it twice): `upstream` is an
 * OpenAI-compatible server that answers every completion at once with a fixed body; `client` is a
 * load generator on keep-alive node:http connections (not `fetch`, whose per-request cost would
 * make the client the bottleneck). Keeping both out of the benchmark's process means
 * process.cpuUsage() there counts only the proxy under test (the edge, or the bare proxy).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export const ANSWER = JSON.stringify({
  id: "c1",
  object: "chat.completion",
  created: 0,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "white" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

export interface LoadJob {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  requests: number;
  warmup: number;
}

/** One request at a time, taking the targets in turn, so each sees the same moments of a noisy machine. */
export interface InterleavedJob {
  targets: { url: string; headers: Record<string, string> }[];
  body: string;
  /** Requests per target. */
  requests: number;
  warmup: number;
}

export interface LoadResult {
  /** Requests per second over the measured requests. */
  rps: number;
  /** Each measured request's latency in ms, sorted. */
  latencies: number[];
}

async function upstream(): Promise<void> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(ANSWER) }).end(ANSWER));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

/** A POST of `body` to `target` on keep-alive connections of `agent`; resolves when the answer is read. */
function poster(agent: http.Agent, target: { url: string; headers: Record<string, string> }, text: string): () => Promise<void> {
  const url = new URL(target.url);
  const body = Buffer.from(text);
  const headers = { ...target.headers, "content-type": "application/json", "content-length": String(body.length) };
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers }, (res) => {
        let answer = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (answer += chunk));
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}: ${answer}`))));
      });
      req.on("error", reject);
      req.end(body);
    });
}

async function interleaved(job: InterleavedJob): Promise<number[][]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const posts = job.targets.map((target) => poster(agent, target, job.body));
  const latencies: number[][] = job.targets.map(() => []);
  for (let i = 0; i < job.warmup + job.requests; i++) {
    for (const [t, post] of posts.entries()) {
      const start = performance.now();
      await post();
      if (i >= job.warmup) latencies[t].push(performance.now() - start);
    }
  }
  agent.destroy();
  return latencies.map((l) => l.sort((a, b) => a - b));
}

async function load(job: LoadJob): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const one = poster(agent, job, job.body);
  const run = async (count: number, record: number[] | null) => {
    let left = count;
    await Promise.all(
      Array.from({ length: job.connections }, async () => {
        while (left-- > 0) {
          const t = performance.now();
          await one();
          record?.push(performance.now() - t);
        }
      }),
    );
  };
  await run(job.warmup, null);
  const latencies: number[] = [];
  const t = performance.now();
  await run(job.requests, latencies);
  const seconds = (performance.now() - t) / 1000;
  agent.destroy();
  return { rps: job.requests / seconds, latencies: latencies.sort((a, b) => a - b) };
}

if (process.argv[2] === "upstream") await upstream();
if (process.argv[2] === "client") {
  process.on("message", (job: LoadJob | InterleavedJob) => {
    ("targets" in job ? interleaved(job) : load(job)).then(
      (result) => process.send!({ result }),
      (err: Error) => process.send!({ error: err.message }),
    );
  });
  process.send!({ ready: true });
}
