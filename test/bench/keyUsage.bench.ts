/**
 * Keys with rules and their usage (issue 28), against a real `svc cloud serve` process (the built
 * CLI: run `npm run build` first) proxying an upstream that answers at once (edgeLoadChild.ts):
 * - a limit test: CLIENTS concurrent clients against one key with an RPM limit, over WINDOWS
 *   windows: the requests served per window against the limit (tolerance 0). A window ends a minute
 *   after its first request; here each one is ended by moving its start back in the store (the
 *   meter row's window_start, as cloud-key-limits.test.ts does), not waited for;
 * - a budget raced by the same clients: tokens served past it (bound: one request's tokens);
 * - usage recorded against the sum of the answers' `usage` fields (429s counted as requests);
 * - a kill -9 of the cloud in the middle of a load run: the usage missing after a restart against
 *   what was answered in the last flush interval (SVC_EDGE_USAGE_FLUSH_MS, 1 s) before the kill.
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import type { UsageReport } from "../../sdk/wire.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http } from "../support/api.js";
import { withStore } from "../support/store.js";
import { pollUntil } from "../support/poll.js";

const CLIENTS = 16;
const LIMIT = 100;
const WINDOWS = 4;
const BUDGET = 3000;
const FLUSH_MS = 1000;
const BODY = JSON.stringify({ model: "x", messages: [{ role: "user", content: "What color is milk?" }], max_tokens: 8 });

function upstreamChild(): Promise<{ proc: ChildProcess; url: string }> {
  const proc = fork(path.join(import.meta.dirname, "edgeLoadChild.ts"), ["upstream"], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    proc.once("message", (first: { url: string }) => resolve({ proc, url: first.url }));
    proc.once("exit", (code) => reject(new Error(`upstream child exited with ${code}`)));
  });
}

interface Tally {
  status: Map<number, number>;
  tokens: number;
}

/** One request with `key`: its status, and its answer's total_tokens when served. */
async function ask(edgeUrl: string, slug: string, key: string): Promise<{ status: number; tokens: number; code?: string }> {
  const res = await fetch(`${edgeUrl}/d/${slug}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: BODY,
  });
  const body = (await res.json()) as { usage?: { total_tokens: number }; error?: { code: string } };
  return { status: res.status, tokens: body.usage?.total_tokens ?? 0, code: body.error?.code };
}

/** CLIENTS clients, each sending until `stop` says so; every answer is tallied. */
async function race(edgeUrl: string, slug: string, key: string, tally: Tally, stop: (sent: number) => boolean): Promise<void> {
  let sent = 0;
  const client = async () => {
    while (!stop(sent)) {
      sent += 1;
      const answer = await ask(edgeUrl, slug, key);
      tally.status.set(answer.status, (tally.status.get(answer.status) ?? 0) + 1);
      tally.tokens += answer.tokens;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
}

const upstream = await upstreamChild();
let cloud: TestCloud | undefined = await startTestCloud({ env: { SVC_EDGE_USAGE_FLUSH_MS: String(FLUSH_MS) } });
try {
  const workerToken = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
  const registered = await http(cloud, "POST", "/v1/models", { token: workerToken, body: { name: "instant", upstreamUrl: `${upstream.url}/v1` } });
  if (registered.status !== 201) throw new Error(`model registration failed: ${registered.text}`);
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  let client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  const deployment = await client.createDeployment({ slug: "bench-keys", target: { kind: "base_model", name: "instant" }, authMode: "fixed_api_key" });

  // --- limit: served per window -------------------------------------------------------------------
  const limited = await client.createDeploymentKey(deployment.id, { label: "limited", limits: { requestsPerMinute: LIMIT, tokensPerMinute: null } });
  const limitedTally: Tally = { status: new Map(), tokens: 0 };
  const perWindow: number[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    const before = limitedTally.status.get(200) ?? 0;
    // Three times the limit per window: two thirds of them must be refused.
    await race(cloud.edgeUrl, "bench-keys", limited.key, limitedTally, (sent) => sent >= 3 * LIMIT);
    perWindow.push((limitedTally.status.get(200) ?? 0) - before);
    await withStore(cloud, (db) => db.updateTable("deployment_key_meters").set({ window_start: 0 }).where("key_id", "=", limited.id).execute());
  }
  const overLimit = Math.max(...perWindow.map((n) => Math.abs(n - LIMIT)));
  console.log(
    `limit test: ${CLIENTS} clients, ${LIMIT} RPM, ${WINDOWS} windows of ${3 * LIMIT} requests: served ${perWindow.join(", ")} (tolerance 0; worst ${overLimit} off), 429s ${limitedTally.status.get(429) ?? 0}`,
  );

  // --- budget: raced until insufficient_quota -------------------------------------------------------
  const budgeted = await client.createDeploymentKey(deployment.id, { label: "budgeted", budget: { tokens: BUDGET, period: "total" } });
  const budgetTally: Tally = { status: new Map(), tokens: 0 };
  await race(cloud.edgeUrl, "bench-keys", budgeted.key, budgetTally, (sent) => sent >= (BUDGET / 6) * 2);
  console.log(
    `budget test: ${CLIENTS} clients, budget ${BUDGET} tokens: ${budgetTally.tokens} tokens served (${budgetTally.tokens - BUDGET} over; bound: one request's 6 tokens), ${budgetTally.status.get(429) ?? 0} refused`,
  );

  // --- usage recorded = the answers' usage fields -----------------------------------------------------
  const recorded = (report: UsageReport, keyId: string) => report.totals.find((t) => t.keyId === keyId);
  const sentOf = (t: Tally) => [...t.status.values()].reduce((n, c) => n + c, 0);
  for (const [name, key, tally] of [
    ["limited", limited, limitedTally],
    ["budgeted", budgeted, budgetTally],
  ] as const) {
    // Written within a flush interval; a count that never matches is printed as it stands.
    const latest = async () => recorded(await client.getDeploymentUsageReport(deployment.id, "hour"), key.id);
    const row = await pollUntil(async () => ((await latest())?.requests === sentOf(tally) ? latest() : undefined), {
      timeoutMs: 20_000,
      description: `usage of the ${name} key`,
    }).catch(latest);
    console.log(
      `usage totals, ${name} key: ${row?.requests} requests / ${(row?.promptTokens ?? 0) + (row?.completionTokens ?? 0)} tokens recorded; answers: ${sentOf(tally)} requests / ${tally.tokens} tokens (usage fields)`,
    );
  }

  // --- kill -9 in the middle of a load run ---------------------------------------------------------------
  const loaded = await client.createDeploymentKey(deployment.id, { label: "loaded" });
  const answers: { at: number; tokens: number }[] = [];
  let killed = false;
  const load = Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!killed) {
        try {
          const answer = await ask(cloud!.edgeUrl, "bench-keys", loaded.key);
          if (answer.status === 200) answers.push({ at: Date.now(), tokens: answer.tokens });
        } catch {
          // the cloud is gone
        }
      }
    }),
  );
  await pollUntil(async () => answers.length > 0 && Date.now() - answers[0].at > 5 * FLUSH_MS, { timeoutMs: 60_000, description: "5 s of load" });
  killed = true;
  const killedAt = Date.now();
  await cloud.kill();
  await load;
  cloud = await cloud.restart();
  client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  const after = recorded(await client.getDeploymentUsageReport(deployment.id, "hour"), loaded.id);
  const answeredTokens = answers.reduce((n, a) => n + a.tokens, 0);
  const lastInterval = answers.filter((a) => a.at >= killedAt - FLUSH_MS);
  const missing = answers.length - (after?.requests ?? 0);
  console.log(
    `kill -9 mid-load (flush interval ${FLUSH_MS} ms): ${answers.length} answered (${answeredTokens} tokens), ${after?.requests ?? 0} recorded (${(after?.promptTokens ?? 0) + (after?.completionTokens ?? 0)} tokens): ${missing} missing; answered in the last interval: ${lastInterval.length} -> ${missing <= lastInterval.length ? "within one interval" : "MORE THAN ONE INTERVAL"}`,
  );
} finally {
  await cloud?.dispose();
  upstream.proc.kill();
}
