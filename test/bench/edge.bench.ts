/**
 * Edge benchmarks (issue 4), each beside a baseline measured in the same run:
 * - edge overhead: requests/s and p50/p99 of an authenticated chat completion proxied to a
 *   registered upstream that answers instantly, vs. a bare Node `http` server answering the same;
 * - svc-tiny on llama.cpp through the edge: time to first token and tokens/s (streamed);
 * - key-revocation propagation: from the revoke call returning to the first 401.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startCloud } from "../../cloud/serve.js";
import { registerModel } from "../../cloud/domain/models.js";
import { CloudClient } from "../../sdk/client.js";
import { latencies, percentile, report } from "./stats.js";

const REQUESTS = 2000;
const CONCURRENCY = 8;
const BODY = JSON.stringify({ model: "x", messages: [{ role: "user", content: "What color is milk?" }], max_tokens: 8 });
const ANSWER = JSON.stringify({
  id: "c1",
  object: "chat.completion",
  created: 0,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "white" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

/** An OpenAI-compatible server that answers every completion at once with a fixed body. */
async function instantServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(ANSWER));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

async function throughput(call: () => Promise<unknown>): Promise<number> {
  let left = REQUESTS;
  const t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (left-- > 0) await call();
  }));
  return REQUESTS / ((performance.now() - t) / 1000);
}

function poster(url: string, headers: Record<string, string> = {}) {
  return async () => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    return res.arrayBuffer();
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-edge-"));
const upstream = await instantServer();
const cloud = await startCloud({ dataDir: path.join(dir, "cloud"), port: 0, edgePort: 0 });
try {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  await registerModel(cloud.ctx, { name: "instant", upstreamUrl: `${upstream.url}/v1` });

  // --- edge overhead against a bare server ------------------------------------------------
  const proxied = await client.createDeployment({ slug: "bench-proxy", target: { kind: "base_model", name: "instant" }, authMode: "fixed_api_key" });
  const { key } = await client.createDeploymentKey(proxied.id, { label: "bench" });
  const viaEdge = poster(`${cloud.edgeUrl}/d/bench-proxy/v1/chat/completions`, { authorization: `Bearer ${key}` });
  const direct = poster(`${upstream.url}/v1/chat/completions`);
  const edgeLat = await latencies(viaEdge, REQUESTS);
  const bareLat = await latencies(direct, REQUESTS);
  const edgeRps = await throughput(viaEdge);
  const bareRps = await throughput(direct);
  report(`edge → upstream, ${CONCURRENCY} concurrent`, edgeRps, "req/s", "bare http server", bareRps);
  report("edge → upstream p50 (authenticated)", percentile(edgeLat, 50), "ms", "bare http p50", percentile(bareLat, 50), false);
  report("edge → upstream p99 (authenticated)", percentile(edgeLat, 99), "ms", "bare http p99", percentile(bareLat, 99), false);

  // --- svc-tiny on llama.cpp ----------------------------------------------------------------
  await client.createDeployment({ slug: "bench-tiny", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
  const ttft: number[] = [];
  const whole: number[] = [];
  let tokens = 0;
  let decodeMs = 0;
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    const res = await fetch(`${cloud.edgeUrl}/d/bench-tiny/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Tell me about cats." }], max_tokens: 100, stream: true, stream_options: { include_usage: true }, temperature: 0.8, seed: i }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let first = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      text += decoder.decode(r.value, { stream: true });
      if (!first && text.includes('"content":"') && /"content":"[^"]/.test(text)) first = performance.now();
    }
    const usage = JSON.parse(text.split("\n\n").filter(Boolean).at(-2)!.slice(6)).usage;
    if (i === 0) continue; // the first request loads the model
    ttft.push(first - t);
    whole.push(performance.now() - t);
    tokens += usage.completion_tokens;
    decodeMs += performance.now() - first;
  }
  ttft.sort((a, b) => a - b);
  whole.sort((a, b) => a - b);
  // Baselines: the whole streamed answer (what a non-streaming client waits for), and the decode
  // rate ENGINE-NOTES.md measured for this model size directly on llama.cpp (lower end).
  report("svc-tiny time to first token p50", percentile(ttft, 50), "ms", "whole answer p50", percentile(whole, 50), false);
  report("svc-tiny decode through the edge", (tokens / decodeMs) * 1000, "tok/s", "ENGINE-NOTES lower bound", 1700);

  // --- key revocation propagation -------------------------------------------------------------
  const revocations: number[] = [];
  for (let i = 0; i < 20; i++) {
    const k = await client.createDeploymentKey(proxied.id, { label: `r${i}` });
    const ask = () => fetch(`${cloud.edgeUrl}/d/bench-proxy/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${k.key}` }, body: BODY });
    if ((await ask()).status !== 200) throw new Error("key not accepted");
    await client.revokeDeploymentKey(proxied.id, k.id);
    const t = performance.now();
    while ((await ask()).status !== 401) if (performance.now() - t > 2000) throw new Error("revocation did not propagate in 2 s");
    revocations.push(performance.now() - t);
  }
  revocations.sort((a, b) => a - b);
  report("key revocation → first 401, p99", percentile(revocations, 99), "ms", "documented bound", 1000, false);
} finally {
  await cloud.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
}
