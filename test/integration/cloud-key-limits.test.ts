/**
 * Keys with rules (issue 28): expiry and rotation, requests-per-minute limits and token budgets
 * enforced by two cloud processes sharing one store (the PostgreSQL pass runs it on PostgreSQL),
 * streamed and abandoned answers charged their real tokens, usage per key and minute. The real
 * `openai` client against the real edge and llama.cpp. Windows are moved through the store (the
 * meter row's window_start), never waited for.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { CloudClient } from "../../sdk/client.js";
import type { CreatedDeploymentKey, CreateKeyInput, Deployment } from "../../sdk/wire.js";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { withStore } from "../support/store.js";

const QUESTION = [{ role: "user" as const, content: "What color is milk?" }];

describe("cloud: keys with expiry, limits and budgets", function () {
  this.timeout(120_000);
  let a: TestCloud;
  let b: TestCloud;
  let client: CloudClient;
  let deployment: Deployment;

  before(async () => {
    a = await startTestCloud({ env: { SVC_EDGE_USAGE_FLUSH_MS: "100" } });
    // On PostgreSQL a second instance on the same store: limits must hold across both (SQLite serves one instance).
    b = a.databaseUrl ? await a.restart({ env: { SVC_EDGE_USAGE_FLUSH_MS: "100" } }) : a;
    client = (await newAccount(a)).client;
    deployment = await client.createDeployment({ slug: "limited", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
  });
  after(async () => {
    if (b !== a) await b?.stop();
    await a?.dispose();
  });

  const sdk = (cloud: TestCloud, key: string) => new OpenAI({ baseURL: `${cloud.edgeUrl}/d/limited/v1`, apiKey: key, maxRetries: 0 });
  const ask = (cloud: TestCloud, key: string, maxTokens = 2) =>
    sdk(cloud, key).chat.completions.create({ model: "x", messages: QUESTION, max_tokens: maxTokens, temperature: 0 });
  const meter = (keyId: string) =>
    withStore(a, (db) => db.selectFrom("deployment_key_meters").selectAll().where("key_id", "=", keyId).executeTakeFirstOrThrow());
  /** Settles every request in flight: nothing held any more. */
  const settled = (keyId: string) =>
    pollUntil(async () => Number((await meter(keyId)).reserved_tokens) === 0, { timeoutMs: 20_000, description: "requests in flight to settle" });
  const rejection = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (err) {
      if (err instanceof OpenAI.APIError) return err;
      throw err;
    }
    return null;
  };
  const keyNamed = async (id: string) => (await client.listDeploymentKeys(deployment.id)).find((k) => k.id === id)!;
  /** A new key reaches the other instance's edge through the cluster signal, within a second: wait for it there. */
  const acceptedEverywhere = async (plaintext: string) => {
    for (const cloud of [a, b]) {
      await pollUntil(
        async () => (await fetch(`${cloud.edgeUrl}/d/limited/v1/models`, { headers: { authorization: `Bearer ${plaintext}` } })).status === 200 || undefined,
        {
          timeoutMs: 10_000,
          description: "the new key accepted by every instance",
        },
      );
    }
  };
  const issue = async (input: CreateKeyInput) => {
    const created = await client.createDeploymentKey(deployment.id, input);
    await acceptedEverywhere(created.key);
    return created;
  };

  it("stores the rules given at issue time and lists them with the key's usage", async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const key = await client.createDeploymentKey(deployment.id, {
      label: "ci",
      expiresAt,
      limits: { requestsPerMinute: 30, tokensPerMinute: 5000 },
      budget: { tokens: 100000, period: "month" },
    });
    assert.equal(key.expiresAt, expiresAt);
    assert.deepEqual(key.limits, { requestsPerMinute: 30, tokensPerMinute: 5000 });
    assert.deepEqual(key.budget, { tokens: 100000, period: "month" });
    const { key: plaintext, ...shown } = key;
    assert.ok(plaintext.startsWith("svc_live_"));
    assert.deepEqual(await keyNamed(key.id), shown);
    assert.deepEqual(shown.usage, { requests: 0, promptTokens: 0, completionTokens: 0, minuteRequests: 0, minuteTokens: 0, budgetTokens: 0 });
    await assert.rejects(client.createDeploymentKey(deployment.id, { label: "bad", budget: { tokens: 10, period: "week" as "day" } }), /budget must be/);
    await assert.rejects(
      client.createDeploymentKey(deployment.id, { label: "bad", limits: { requestsPerMinute: 0, tokensPerMinute: null } }),
      /requestsPerMinute/,
    );
    await assert.rejects(client.createDeploymentKey(deployment.id, { label: "bad", expiresAt: "next tuesday" }), /expiresAt must be/);
  });

  it("serves exactly the RPM limit per window to racing clients on two instances, with OpenAI's 429 and headers", async () => {
    const limit = 3;
    const key = await issue({ label: "rpm", limits: { requestsPerMinute: limit, tokensPerMinute: null } });
    for (let window = 0; window < 3; window++) {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => rejection(ask(i % 2 ? b : a, key.key))));
      const refused = results.filter((r) => r !== null);
      assert.equal(results.length - refused.length, limit, `window ${window}: served ${results.length - refused.length}`);
      for (const err of refused) {
        assert.equal(err!.status, 429);
        assert.equal(err!.code, "rate_limit_exceeded");
        assert.equal(err!.type, "requests");
        assert.match(err!.message, /requests per min \(RPM\): Limit 3/);
        const retryAfter = Number(err!.headers?.get("retry-after"));
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
        assert.equal(err!.headers?.get("x-ratelimit-limit-requests"), "3");
        assert.equal(err!.headers?.get("x-ratelimit-remaining-requests"), "0");
        assert.match(err!.headers?.get("x-ratelimit-reset-requests") ?? "", /^\d+(ms|s)$|^\d+m\d+s$/);
      }
      // The next window, without waiting a minute: the window started a minute earlier.
      await withStore(a, (db) =>
        db
          .updateTable("deployment_key_meters")
          .set({ window_start: Date.now() - 61_000 })
          .where("key_id", "=", key.id)
          .execute(),
      );
    }
    const response = await fetch(`${a.edgeUrl}/d/limited/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: QUESTION, max_tokens: 1 }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("x-ratelimit-limit-requests"), "3");
    assert.equal(response.headers.get("x-ratelimit-remaining-requests"), "2");
    await response.arrayBuffer();
  });

  it("keeps a budget within one request's tokens under racing requests, then answers insufficient_quota", async () => {
    const budget = 150;
    const key = await issue({ label: "budget", budget: { tokens: budget, period: "day" } });
    let spent = 0;
    let largest = 0;
    let servedCount = 0;
    // Rounds of racing requests until the budget refuses everything.
    for (let round = 0; round < 20; round++) {
      const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => ask(i % 2 ? b : a, key.key, 4)));
      for (const r of results) {
        if (r.status === "fulfilled") {
          spent += r.value.usage!.total_tokens;
          largest = Math.max(largest, r.value.usage!.total_tokens);
          servedCount += 1;
        } else assert.equal((r.reason as InstanceType<typeof OpenAI.APIError>).status, 429, String(r.reason));
      }
      await settled(key.id);
      if (results.every((r) => r.status === "rejected")) break;
    }
    const row = await meter(key.id);
    assert.equal(Number(row.period_tokens), spent, "the meter counts the usage fields of the answers");
    assert.ok(spent >= budget, `spent ${spent} of ${budget}`);
    assert.ok(spent - budget < largest, `overspent ${spent - budget} tokens, more than one request's ${largest}`);
    console.log(`      budget ${budget}: ${servedCount} requests served, ${spent} tokens spent, overspend ${spent - budget} (one request: ${largest})`);
    const err = await rejection(ask(b, key.key));
    assert.equal(err?.status, 429);
    assert.equal(err?.code, "insufficient_quota");
    assert.equal(err?.type, "insufficient_quota");
    assert.ok(Number(err?.headers?.get("retry-after")) > 0);
    assert.equal((await keyNamed(key.id)).usage.budgetTokens, spent);
  });

  it("drops holds a crashed instance left once no request can still be running", async () => {
    const key = await issue({ label: "leak", budget: { tokens: 1000, period: "total" } });
    // What a cloud killed with requests in flight leaves: tokens held that no request will return.
    const leak = (heldUntil: number) =>
      withStore(a, (db) =>
        db.updateTable("deployment_key_meters").set({ reserved_tokens: 5000, held_until: heldUntil }).where("key_id", "=", key.id).execute(),
      );
    await leak(Date.now() + 3_600_000);
    const refused = await rejection(ask(a, key.key));
    assert.equal(refused?.status, 429, "while the holds may still be live, the budget refuses (never overspends)");
    assert.match(refused!.message, /held by requests in flight/);
    await leak(Date.now() - 1000);
    const answer = await ask(b, key.key);
    await settled(key.id);
    const row = await meter(key.id);
    assert.equal(Number(row.period_tokens), answer.usage!.total_tokens);
    assert.equal(Number(row.hold_epoch), 1, "a new epoch of holds");
  });

  it("charges a stream its real tokens at its end, and a client that leaves what was generated", async () => {
    const key = await issue({ label: "stream", budget: { tokens: 1_000_000, period: "total" } });
    const plain = await ask(a, key.key, 4);
    await settled(key.id);
    let before = Number((await meter(key.id)).period_tokens);
    assert.equal(before, plain.usage!.total_tokens);

    const stream = await sdk(a, key.key).chat.completions.create({
      model: "x",
      messages: QUESTION,
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    await settled(key.id);
    assert.equal(Number((await meter(key.id)).period_tokens) - before, usage!.total_tokens);

    before = Number((await meter(key.id)).period_tokens);
    const leaving = await sdk(a, key.key).chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 150, stream: true });
    for await (const chunk of leaving) {
      if (chunk.choices[0]?.delta.content) break; // the client hangs up after its first text
    }
    await settled(key.id);
    const charged = Number((await meter(key.id)).period_tokens) - before;
    // The prompt was read and at least one token decoded; not the 150 it could have cost.
    assert.ok(charged > plain.usage!.prompt_tokens, `charged ${charged}, prompt ${plain.usage!.prompt_tokens}`);
    assert.ok(charged < plain.usage!.prompt_tokens + 150, `charged ${charged}`);
  });

  it("refuses an expired key with 401 expired, and keeps a rotated key working for its grace only", async () => {
    const key = await issue({ label: "rotating", expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    assert.ok((await ask(a, key.key)).choices.length === 1);
    const next: CreatedDeploymentKey = await client.rotateDeploymentKey(deployment.id, key.id, 3600);
    await acceptedEverywhere(next.key);
    assert.equal(next.label, "rotating");
    assert.equal(next.expiresAt, key.expiresAt);
    assert.equal((await keyNamed(key.id)).rotatedTo, next.id);
    // Within the grace both work, on both instances.
    assert.ok((await ask(b, key.key)).choices.length === 1);
    assert.ok((await ask(b, next.key)).choices.length === 1);
    // The grace ends: the old key is refused everywhere, the new one goes on.
    await client.updateDeploymentKey(deployment.id, key.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    for (const cloud of [a, b]) {
      const err = await pollUntil(
        async () => {
          const e = await rejection(ask(cloud, key.key));
          return e?.status === 401 ? e : undefined;
        },
        { timeoutMs: 10_000, description: "the expired key refused" },
      );
      assert.equal(err.code, "expired");
      assert.match(err.message, /expired at/);
    }
    assert.ok((await ask(a, next.key)).choices.length === 1);
    // A grace of 0 ends the old key at once.
    const third = await client.rotateDeploymentKey(deployment.id, next.id, 0);
    const err = await rejection(ask(a, next.key));
    assert.equal(err?.status, 401);
    assert.equal(err?.code, "expired");
    assert.ok((await ask(a, third.key)).choices.length === 1);
  });

  it("records usage per key and minute, equal to the usage fields of the answers", async () => {
    const key = await issue({ label: "usage" });
    let prompt = 0;
    let completion = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await ask(i % 2 ? b : a, key.key, 3);
      prompt += answer.usage!.prompt_tokens;
      completion += answer.usage!.completion_tokens;
    }
    const rows = await pollUntil(
      async () => {
        const all = (await client.getDeploymentUsage(deployment.id)).filter((r) => r.keyId === key.id);
        return all.reduce((n, r) => n + r.requests, 0) === 5 ? all : undefined;
      },
      { timeoutMs: 10_000, description: "usage rows of 5 requests" },
    );
    assert.equal(
      rows.reduce((n, r) => n + r.promptTokens, 0),
      prompt,
    );
    assert.equal(
      rows.reduce((n, r) => n + r.completionTokens, 0),
      completion,
    );
    assert.equal(rows[0].keyPrefix, key.prefix);
    const listed = await keyNamed(key.id);
    assert.deepEqual([listed.usage.requests, listed.usage.promptTokens, listed.usage.completionTokens], [5, prompt, completion]);
    // /metrics of each process counts the requests it answered, labelled by deployment and key prefix.
    let counted = 0;
    for (const cloud of b === a ? [a] : [a, b]) {
      const text = await (await fetch(`${cloud.cloudUrl}/metrics`)).text();
      const line = new RegExp(`^svc_key_requests_total\\{deployment="limited",key_prefix="${key.prefix}",status="200"\\} (\\d+)$`, "m").exec(text);
      counted += Number(line?.[1] ?? 0);
      assert.match(text, new RegExp(`^svc_key_time_to_first_token_seconds_count\\{deployment="limited",key_prefix="${key.prefix}"\\} \\d+$`, "m"));
    }
    assert.equal(counted, 5);
  });
});
