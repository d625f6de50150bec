/**
 * Local inference through the edge (issue 15) against node-llama-cpp driven directly in this
 * process, same model, same prompt, seeds and sampling, measured in the same run, first for
 * svc-tiny, then for a ~60M-parameter Llama-architecture GGUF (random weights around Llama 2's
 * real vocabulary, built here: test/support/testModels.ts), whose tokens cost what a small real
 * model's do, ~10x svc-tiny's:
 * - 4 concurrent streams: aggregate tokens/s, edge vs 4 contexts decoding side by side;
 * - 1 stream: decode tokens/s after the first token, edge vs 1 context;
 * - time to first token of the 4 concurrent streams, edge vs direct;
 * - why a pool of contexts: 4 sequences of one context (node-llama-cpp batches them into one
 *   decode per step) vs 4 contexts, both driven directly (svc-tiny only, as is the single stream).
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
import { registerModel } from "../../cloud/domain/models.js";
import { loadLlamaCppModel } from "../../engine/infer/llama-cpp.js";
import { CloudClient } from "../../sdk/client.js";
import { buildTestModel } from "../support/testModels.js";
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
    const req = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
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
      },
    );
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

/** A Llama-architecture model shaped like a small real one, with a token cost closer to real use. */
const LLAMA_OPTIONS = {
  arch: "llama",
  vocab: "llama-spm",
  weightType: "Q8_0",
  embeddingLength: 512,
  blockCount: 8,
  headCount: 8,
  headCountKv: 4,
  feedForwardLength: 1536,
  contextLength: 512,
} as const;
const LLAMA_ROUNDS = 10;

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-inference-"));
const cloud = await startCloud({ dataDir: path.join(dir, "cloud"), port: 0, edgePort: 0 });
try {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  console.log(`(edge pool: ${settingsFromEnv().concurrency} contexts per model; ${os.availableParallelism()} cores)`);

  await client.createDeployment({ slug: "bench-tiny", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
  await compare("svc-tiny", `${cloud.edgeUrl}/d/bench-tiny/v1/chat/completions`, modelPath, ROUNDS, { batched: true, single: true });

  // svc-tiny's tokens cost ~0.2 ms of CPU, so the edge's fixed cost per token weighs more there
  // than with any real model; the same comparison on a ~60M-parameter Llama shows it at a real cost.
  const llamaPath = await buildTestModel(LLAMA_OPTIONS);
  await registerModel(cloud.ctx, { name: "bench-llama", path: llamaPath });
  await client.createDeployment({ slug: "bench-llama", target: { kind: "base_model", name: "bench-llama" }, authMode: "none" });
  await compare("llama-60M", `${cloud.edgeUrl}/d/bench-llama/v1/chat/completions`, llamaPath, LLAMA_ROUNDS, { batched: false, single: false });
  agent.destroy();
} finally {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * One model, edge against direct: `rounds` rounds of 4 concurrent streams each (and, when asked,
 * 4 sequences of one shared context, and single streams for decode speed).
 */
async function compare(label: string, url: string, modelFile: string, rounds: number, extra: { batched: boolean; single: boolean }): Promise<void> {
  const engine = await loadLlamaCppModel({ modelPath: modelFile, threads: 1 });
  try {
    const prompt = engine.chatPromptTokens(messages);
    const contexts = await Promise.all(
      Array.from({ length: STREAMS }, () => engine.model.createContext({ contextSize: engine.trainContextSize, threads: 1, sequences: 1 })),
    );
    const sequences = contexts.map((c) => c.getSequence());
    const shared = extra.batched ? await engine.model.createContext({ contextSize: engine.trainContextSize * STREAMS, threads: 1, sequences: STREAMS }) : null;
    const sharedSequences = shared ? Array.from({ length: STREAMS }, () => shared.getSequence()) : [];

    // Warm both sides: the edge's first requests load the model and fill its pool of contexts.
    await concurrent(STREAMS, 0, (_i, seed) => edgeStream(url, seed));
    await concurrent(STREAMS, 0, (i, seed) => directStream(sequences[i], prompt, seed));

    const totals = { edge: { tokens: 0, ms: 0 }, direct: { tokens: 0, ms: 0 }, sequences: { tokens: 0, ms: 0 } };
    const ttft = { edge: [] as number[], direct: [] as number[] };
    const single = { edge: { tokens: 0, ms: 0 }, direct: { tokens: 0, ms: 0 } };
    const cpuMs = { edge: 0, direct: 0 };
    const childCpuMs = () => processCpuMs(cloud.inference.workerPid);
    for (let round = 1; round <= rounds; round++) {
      let before = ownCpuMs() + childCpuMs();
      const edge = await concurrent(STREAMS, round, (_i, seed) => edgeStream(url, seed));
      cpuMs.edge += ownCpuMs() + childCpuMs() - before;
      before = ownCpuMs();
      const direct = await concurrent(STREAMS, round, (i, seed) => directStream(sequences[i], prompt, seed));
      cpuMs.direct += ownCpuMs() - before;
      if (shared) {
        const batched = await concurrent(STREAMS, round, (i, seed) => directStream(sharedSequences[i], prompt, seed));
        totals.sequences.tokens += batched.runs.reduce((sum, r) => sum + r.tokens, 0);
        totals.sequences.ms += batched.wallMs;
      }
      for (const [side, result] of [
        ["edge", edge],
        ["direct", direct],
      ] as const) {
        totals[side].tokens += result.runs.reduce((sum, r) => sum + r.tokens, 0);
        totals[side].ms += result.wallMs;
        ttft[side].push(...result.runs.map((r) => r.ttft));
      }
      for (let again = 0; extra.single && again < 3; again++) {
        const seed = round * 3 + again;
        for (const [side, run] of [
          ["edge", await edgeStream(url, seed)],
          ["direct", await directStream(sequences[0], prompt, seed)],
        ] as const) {
          // The first token is not part of the decode interval.
          single[side].tokens += run.tokens - 1;
          single[side].ms += run.decodeMs;
        }
      }
    }
    const rate = (t: { tokens: number; ms: number }) => (t.tokens / t.ms) * 1000;
    ttft.edge.sort((a, b) => a - b);
    ttft.direct.sort((a, b) => a - b);
    report(`${label} ${STREAMS} concurrent streams, edge`, rate(totals.edge), "tok/s", `${STREAMS} contexts direct`, rate(totals.direct));
    if (extra.single) report(`${label} 1 stream decode, edge`, rate(single.edge), "tok/s", "1 context direct", rate(single.direct));
    report(
      `${label} CPU per token, ${STREAMS} streams, edge`,
      (cpuMs.edge / totals.edge.tokens) * 1000,
      "µs",
      "direct",
      (cpuMs.direct / totals.direct.tokens) * 1000,
      false,
    );
    if (shared)
      report(`${label} ${STREAMS} sequences of 1 context, direct`, rate(totals.sequences), "tok/s", `${STREAMS} contexts direct`, rate(totals.direct));
    report(`${label} TTFT p50, ${STREAMS} concurrent, edge`, percentile(ttft.edge, 50), "ms", "direct p50", percentile(ttft.direct, 50), false);
    report(`${label} TTFT p90, ${STREAMS} concurrent, edge`, percentile(ttft.edge, 90), "ms", "direct p90", percentile(ttft.direct, 90), false);
    for (const context of [...contexts, ...(shared ? [shared] : [])]) await context.dispose();
  } finally {
    await engine.dispose();
  }
}
