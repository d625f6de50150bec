/**
 * Local inference through the edge (issue 15) against node-llama-cpp driven directly in this
 * process, same model (svc-tiny), same prompt, seeds and sampling, measured in the same run:
 * - 4 concurrent streams: aggregate tokens/s, edge vs 4 contexts decoding side by side;
 * - 1 stream: decode tokens/s after the first token, edge vs 1 context;
 * - time to first token of the 4 concurrent streams, edge vs direct;
 * - why a pool of contexts: 4 sequences of one context (node-llama-cpp batches them into one
 *   decode per step) vs 4 contexts, both driven directly.
 * Rounds alternate edge and direct so that load from other processes hits both alike. Since that
 * load still swings the rates, the CPU time each side spends per token of the concurrent streams
 * is reported too (edge: the cloud, its HTTP client here and the inference child together), which
 * other processes do not disturb.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { startCloud } from "../../cloud/serve.js";
import { settingsFromEnv } from "../../cloud/inference/index.js";
import { loadLlamaCppModel } from "../../engine/infer/llama-cpp.js";
import { CloudClient } from "../../sdk/client.js";
import { percentile, report } from "./stats.js";

const STREAMS = 4;
/** Enough tokens per side (~5K) that a burst of load from other processes averages out. */
const ROUNDS = 20;
const MAX_TOKENS = 100;
const TEMPERATURE = 0.8;
const messages = [{ role: "user" as const, content: "Tell me about cats." }];
const modelPath = path.resolve(import.meta.dirname, "../../models/svc-tiny.gguf");

interface Run {
  tokens: number;
  /** ms from the request (or the evaluate call) to the first token */
  ttft: number;
  /** ms from the first token to the last */
  decodeMs: number;
}

/**
 * One streamed completion through the edge; counts tokens from the final usage chunk. The client
 * is node:http, not fetch: it shares this process (and the 2 cores) with the cloud, and undici's
 * per-chunk web streams would cost more CPU than the edge being measured.
 */
const agent = new http.Agent({ keepAlive: true });
function edgeStream(url: string, seed: number): Promise<Run> {
  const body = JSON.stringify({ messages, max_tokens: MAX_TOKENS, temperature: TEMPERATURE, seed, stream: true, stream_options: { include_usage: true } });
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.setEncoding("utf8");
      let text = "";
      let first = 0;
      res.on("data", (chunk: string) => {
        text += chunk;
        if (!first && /"content":"[^"]/.test(text)) first = performance.now();
      });
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text}`));
        const usage = JSON.parse(text.split("\n\n").filter(Boolean).at(-2)!.slice(6)).usage;
        resolve({ tokens: usage.completion_tokens, ttft: first - t, decodeMs: performance.now() - first });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The same generation on a context of our own: node-llama-cpp's evaluate loop, nothing else. */
async function directStream(sequence: LlamaContextSequence, prompt: Token[], seed: number): Promise<Run> {
  await sequence.clearHistory();
  const t = performance.now();
  let first = 0;
  let tokens = 0;
  for await (const _token of sequence.evaluate(prompt, { temperature: TEMPERATURE, seed })) {
    if (!first) first = performance.now();
    if (++tokens >= MAX_TOKENS) break;
  }
  return { tokens, ttft: first - t, decodeMs: performance.now() - first };
}

/** Runs `count` streams at once, `ROUNDS`-times-interleaved by the caller; aggregate tok/s. */
async function concurrent(count: number, round: number, one: (i: number, seed: number) => Promise<Run>): Promise<{ wallMs: number; runs: Run[] }> {
  const t = performance.now();
  const runs = await Promise.all(Array.from({ length: count }, (_, i) => one(i, round * count + i)));
  return { wallMs: performance.now() - t, runs };
}

/** CPU ms of this process so far. */
const ownCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** CPU ms of another process so far, from /proc (Linux; clock ticks of 10 ms); NaN elsewhere. */
function processCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-inference-"));
const cloud = await startCloud({ dataDir: path.join(dir, "cloud"), port: 0, edgePort: 0 });
const engine = await loadLlamaCppModel({ modelPath, threads: 1 });
try {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  await client.createDeployment({ slug: "bench-tiny", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
  const url = `${cloud.edgeUrl}/d/bench-tiny/v1/chat/completions`;

  const prompt = engine.chatPromptTokens(messages);
  const contexts = await Promise.all(
    Array.from({ length: STREAMS }, () => engine.model.createContext({ contextSize: engine.trainContextSize, threads: 1, sequences: 1 })),
  );
  const sequences = contexts.map((c) => c.getSequence());
  const shared = await engine.model.createContext({ contextSize: engine.trainContextSize * STREAMS, threads: 1, sequences: STREAMS });
  const sharedSequences = Array.from({ length: STREAMS }, () => shared.getSequence());

  // Warm both sides: the edge's first requests load the model and fill its pool of contexts.
  await concurrent(STREAMS, 0, (_i, seed) => edgeStream(url, seed));
  await concurrent(STREAMS, 0, (i, seed) => directStream(sequences[i], prompt, seed));

  const totals = { edge: { tokens: 0, ms: 0 }, direct: { tokens: 0, ms: 0 }, sequences: { tokens: 0, ms: 0 } };
  const ttft = { edge: [] as number[], direct: [] as number[] };
  const single = { edge: { tokens: 0, ms: 0 }, direct: { tokens: 0, ms: 0 } };
  const cpuMs = { edge: 0, direct: 0 };
  const childCpuMs = () => processCpuMs(cloud.inference.workerPid);
  for (let round = 1; round <= ROUNDS; round++) {
    let before = ownCpuMs() + childCpuMs();
    const edge = await concurrent(STREAMS, round, (_i, seed) => edgeStream(url, seed));
    cpuMs.edge += ownCpuMs() + childCpuMs() - before;
    before = ownCpuMs();
    const direct = await concurrent(STREAMS, round, (i, seed) => directStream(sequences[i], prompt, seed));
    cpuMs.direct += ownCpuMs() - before;
    const batched = await concurrent(STREAMS, round, (i, seed) => directStream(sharedSequences[i], prompt, seed));
    totals.sequences.tokens += batched.runs.reduce((sum, r) => sum + r.tokens, 0);
    totals.sequences.ms += batched.wallMs;
    for (const [side, result] of [["edge", edge], ["direct", direct]] as const) {
      totals[side].tokens += result.runs.reduce((sum, r) => sum + r.tokens, 0);
      totals[side].ms += result.wallMs;
      ttft[side].push(...result.runs.map((r) => r.ttft));
    }
    for (let again = 0; again < 3; again++) {
      const seed = round * 3 + again;
      for (const [side, run] of [["edge", await edgeStream(url, seed)], ["direct", await directStream(sequences[0], prompt, seed)]] as const) {
        // The first token is not part of the decode interval.
        single[side].tokens += run.tokens - 1;
        single[side].ms += run.decodeMs;
      }
    }
  }
  const rate = (t: { tokens: number; ms: number }) => (t.tokens / t.ms) * 1000;
  ttft.edge.sort((a, b) => a - b);
  ttft.direct.sort((a, b) => a - b);
  console.log(`(edge pool: ${settingsFromEnv().concurrency} contexts per model; ${os.availableParallelism()} cores)`);
  report(`svc-tiny ${STREAMS} concurrent streams, edge`, rate(totals.edge), "tok/s", `${STREAMS} contexts direct`, rate(totals.direct));
  report("svc-tiny 1 stream decode, edge", rate(single.edge), "tok/s", "1 context direct", rate(single.direct));
  report(`svc-tiny CPU per token, ${STREAMS} streams, edge`, (cpuMs.edge / totals.edge.tokens) * 1000, "µs", "direct", (cpuMs.direct / totals.direct.tokens) * 1000, false);
  report(`svc-tiny ${STREAMS} sequences of 1 context, direct`, rate(totals.sequences), "tok/s", `${STREAMS} contexts direct`, rate(totals.direct));
  report(`svc-tiny TTFT p50, ${STREAMS} concurrent, edge`, percentile(ttft.edge, 50), "ms", "direct p50", percentile(ttft.direct, 50), false);
  report(`svc-tiny TTFT p90, ${STREAMS} concurrent, edge`, percentile(ttft.edge, 90), "ms", "direct p90", percentile(ttft.direct, 90), false);
  for (const context of [...contexts, shared]) await context.dispose();
  agent.destroy();
} finally {
  await engine.dispose();
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
}
