/**
 * Usage per key survives a crash of the cloud but for its last flush interval (issue 28): clients
 * load a key on the real edge and llama.cpp, the cloud process is killed with SIGKILL in the middle,
 * and the usage a restarted cloud reports is compared with the `usage` fields of the answers the
 * clients received. Usage is written every SVC_EDGE_USAGE_FLUSH_MS, so what is missing must be
 * answers of the last interval before the kill, never more; nothing is counted twice.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { CloudClient } from "../../sdk/client.js";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";

const FLUSH_MS = 500;
/** A loaded machine may start the interval's write late: what the write itself may take. */
const WRITE_SLACK_MS = 250;
const CLIENTS = 4;

interface Answer {
  at: number;
  requests: number;
  tokens: number;
}

describe("cloud: usage per key after a kill -9", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let restarted: TestCloud | undefined;

  after(async () => {
    await restarted?.stop();
    await cloud?.dispose();
  });

  it("loses at most one flush interval of the usage answered before a kill -9 in the middle of a load run", async () => {
    cloud = await startTestCloud({ env: { SVC_EDGE_USAGE_FLUSH_MS: String(FLUSH_MS) } });
    const account = await newAccount(cloud);
    const deployment = await account.client.createDeployment({ slug: "crashy", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
    const key = await account.client.createDeploymentKey(deployment.id, { label: "load", limits: { requestsPerMinute: 100_000, tokensPerMinute: null } });
    const openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/crashy/v1`, apiKey: key.key, maxRetries: 0 });
    const recorded = async (client: CloudClient) => {
      const rows = (await client.getDeploymentUsage(deployment.id)).filter((r) => r.keyId === key.id);
      return { requests: rows.reduce((n, r) => n + r.requests, 0), tokens: rows.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0) };
    };

    const answers: Answer[] = [];
    let killed = false;
    const client = async () => {
      while (!killed) {
        try {
          const answer = await openai.chat.completions.create({
            model: "x",
            messages: [{ role: "user", content: `What color is milk? ${answers.length}` }],
            max_tokens: 3,
            temperature: 0,
          });
          answers.push({ at: Date.now(), requests: 1, tokens: answer.usage!.total_tokens });
        } catch (err) {
          if (!killed) throw err;
        }
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));

    // Mid-load: the load has run for several intervals, some of them written, and requests are still coming.
    await pollUntil(async () => answers.length > 0 && Date.now() - answers[0].at > 6 * FLUSH_MS && (await recorded(account.client)).requests > 0, {
      timeoutMs: 60_000,
      description: "a load run with usage written",
    });
    killed = true;
    const killedAt = Date.now();
    await cloud.kill();
    await load;

    restarted = await cloud.restart();
    const after = await recorded(new CloudClient({ baseUrl: restarted.cloudUrl, token: account.token, projectId: account.projectId }));
    const answered = answers.reduce((sum, a) => ({ requests: sum.requests + a.requests, tokens: sum.tokens + a.tokens }), { requests: 0, tokens: 0 });
    const lastInterval = answers.filter((a) => a.at >= killedAt - FLUSH_MS - WRITE_SLACK_MS);
    const missing = { requests: answered.requests - after.requests, tokens: answered.tokens - after.tokens };
    console.log(
      `      ${answered.requests} answers (${answered.tokens} tokens), ${after.requests} recorded (${after.tokens} tokens): ${missing.requests} missing, ${lastInterval.length} answered in the last ${FLUSH_MS} ms interval (+${WRITE_SLACK_MS} ms)`,
    );
    // Requests answered while the process died may be recorded though their client never read the answer.
    assert.ok(after.requests <= answered.requests + CLIENTS, `recorded ${after.requests} of ${answered.requests} answered`);
    assert.ok(missing.requests <= lastInterval.length, `${missing.requests} requests missing, more than the ${lastInterval.length} of the last flush interval`);
    assert.ok(missing.tokens <= lastInterval.reduce((n, a) => n + a.tokens, 0), `${missing.tokens} tokens missing`);
    assert.ok(after.requests > 0);
  });
});
