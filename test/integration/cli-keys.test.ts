/**
 * `svc keys` (issue 28): issue a key with an expiry, limits and a budget, change its rules, rotate
 * it with a grace, export usage as CSV and JSON. The real CLI against a real cloud, in a project folder.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import type { Deployment } from "../../sdk/wire.js";
import { pollUntil } from "../support/poll.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount, type Account } from "../support/api.js";

describe("svc keys", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let alice: Account;
  let home: string;
  let deployment: Deployment;

  before(async () => {
    cloud = await startTestCloud({ databaseUrl: "", env: { SVC_EDGE_USAGE_FLUSH_MS: "100" } });
    alice = await newAccount(cloud);
    home = mkdtempSync(path.join(os.tmpdir(), "svc-keys-cli-"));
    writeFileSync(path.join(home, "credentials.json"), JSON.stringify({ kind: "anonymous", cloudUrl: cloud.cloudUrl, token: alice.token }), { mode: 0o600 });
    mkdirSync(path.join(home, ".svc"));
    writeFileSync(path.join(home, ".svc", "state.json"), JSON.stringify({ orgSlug: "o", projectSlug: "test", projectId: alice.projectId }));
    deployment = await alice.client.createDeployment({ slug: "cli-keys", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
  });
  after(async () => {
    await cloud?.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[]) =>
    spawnSync(process.execPath, [cliPath, "keys", ...args], {
      encoding: "utf8",
      cwd: home,
      env: { ...process.env, SVC_HOME: home, SVC_CLOUD_URL: cloud.cloudUrl },
    });

  it("creates a key with rules, changes them, rotates it, and exports usage", async () => {
    const created = svc(["create", "cli-keys", "--label", "ci job", "--expires-in", "7d", "--rpm", "30", "--budget", "100000/month"]);
    assert.equal(created.status, 0, created.stderr);
    const [plaintext, summary] = created.stdout.trim().split("\n");
    assert.match(plaintext, /^svc_live_/);
    assert.match(summary, /^issued key (\S+) "ci job" \(expires \S+, 30 RPM, 100000 tokens\/month\); the key above is shown only once$/);
    const keyId = /^issued key (\S+)/.exec(summary)![1];
    const [key] = await alice.client.listDeploymentKeys(deployment.id);
    assert.equal(key.id, keyId);
    assert.ok(Math.abs(Date.parse(key.expiresAt!) - (Date.now() + 7 * 86_400_000)) < 60_000);
    assert.deepEqual(key.limits, { requestsPerMinute: 30, tokensPerMinute: null });

    const updated = svc(["update", "cli-keys", keyId, "--tpm", "5000", "--budget", "none"]);
    assert.equal(updated.status, 0, updated.stderr);
    const [changed] = await alice.client.listDeploymentKeys(deployment.id);
    assert.deepEqual([changed.limits, changed.budget], [{ requestsPerMinute: 30, tokensPerMinute: 5000 }, null]);

    const bad = svc(["create", "cli-keys", "--label", "x", "--budget", "lots"]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--budget "lots": write TOKENS/);

    const answer = await new OpenAI({ baseURL: `${deployment.localUrl}/v1`, apiKey: plaintext, maxRetries: 0 }).chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 2,
    });
    const csv = await pollUntil(
      () => {
        const out = svc(["usage", "cli-keys", "--range", "hour"]);
        return out.stdout.includes(keyId) ? out.stdout : undefined;
      },
      { timeoutMs: 10_000, description: "a usage row of the key" },
    );
    const [header, ...rows] = csv.trim().split("\n");
    assert.equal(
      header,
      "start,key_id,key_prefix,requests,errors,errors_by_status,prompt_tokens,completion_tokens,latency_p50_ms,latency_p95_ms,ttft_p50_ms,ttft_p95_ms",
    );
    const cells = rows.find((r) => r.includes(keyId))!.split(",");
    assert.equal(cells.slice(1, 8).join(","), `${keyId},${key.prefix},1,0,,${answer.usage!.prompt_tokens},${answer.usage!.completion_tokens}`);
    assert.ok(Number(cells[8]) > 0, `latency p50 in ${cells.join(",")}`);
    const json = JSON.parse(svc(["usage", "cli-keys", "--range", "month", "--format", "json"]).stdout);
    assert.equal(json.bucketSeconds, 86_400);
    assert.equal(json.rows.find((r: { keyId: string | null }) => r.keyId === null).requests, 1);
    assert.equal(svc(["usage", "cli-keys", "--range", "week"]).status, 2);

    const rotated = svc(["rotate", "cli-keys", keyId, "--grace", "0"]);
    assert.equal(rotated.status, 0, rotated.stderr);
    const next = rotated.stdout.split("\n")[0];
    const old = await new OpenAI({ baseURL: `${deployment.localUrl}/v1`, apiKey: plaintext, maxRetries: 0 }).models.list().catch((e) => e);
    assert.equal(old.status, 401);
    assert.equal(old.code, "expired");
    assert.equal((await new OpenAI({ baseURL: `${deployment.localUrl}/v1`, apiKey: next, maxRetries: 0 }).models.list()).data[0].id, "cli-keys");
    const list = svc(["list", "cli-keys"]);
    assert.match(list.stdout, /expired/);
    assert.match(list.stdout, /active/);
  });
});
