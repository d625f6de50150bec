/**
 * Concurrent local inference (issue 15): one deployment answers several streams at once from its
 * pool of llama.cpp contexts, the queue bound still answers 429, a seeded answer does not depend
 * on what else runs (no state leaks between the requests a context serves), and a client that
 * hangs up frees its slot. Real cloud process, real llama.cpp with svc-tiny.
 *
 * Order, not time, is asserted. To make "still running" hold without sleeps, the long streams
 * cannot end early: the end-of-text token is banned (logit_bias -100) and each asks for n = 4
 * full-context answers (~600 tokens), seconds of decoding next to the milliseconds a request
 * takes to arrive.
 */
import assert from "node:assert/strict";
import type { CloudClient } from "../../sdk/client.js";
import { END_ID } from "../../engine/tokenizer.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";

const POOL = 4;
const MAX_QUEUE = 2;
const messages = [{ role: "user", content: "Tell me about cats." }];
const LONG = { messages, max_tokens: 4096, n: 4, temperature: 1, logit_bias: { [END_ID]: -100 }, stream: true };

interface Stream {
  /** Resolves with the first content text. */
  first: Promise<string>;
  /** Resolves when the stream ended ([DONE], or the abort). */
  ended: Promise<void>;
  abort(): void;
}

describe("edge: concurrent inference on one deployment", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  let client: CloudClient;
  const slug = "concurrent";
  const url = () => `${cloud.edgeUrl}/d/${slug}/v1/chat/completions`;
  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(url(), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });

  /** Opens a streamed completion; `log` gets `first:<name>` and `end:<name>` in the order they happen. */
  const open = (name: string, body: Record<string, unknown>, log: string[] = []): Stream => {
    const abort = new AbortController();
    let sawFirst!: (text: string) => void;
    const first = new Promise<string>((resolve) => (sawFirst = resolve));
    const ended = (async () => {
      const response = await post(body, abort.signal);
      if (response.status !== 200) throw new Error(`stream ${name}: HTTP ${response.status} ${await response.text()}`);
      const decoder = new TextDecoder();
      let buffered = "";
      let started = false;
      try {
        const reader = response.body!.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          buffered += decoder.decode(read.value, { stream: true });
          const frames = buffered.split("\n\n");
          buffered = frames.pop()!;
          for (const frame of frames) {
            if (frame === "data: [DONE]") log.push(`end:${name}`);
            else if (!started && JSON.parse(frame.slice(6)).choices[0]?.delta?.content) {
              started = true;
              log.push(`first:${name}`);
              sawFirst(name);
            }
          }
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
    })();
    // A failure surfaces through `ended`; `first` must not hang the test on it.
    ended.catch((err) => sawFirst(`failed: ${err}`));
    return { first, ended, abort: () => abort.abort() };
  };

  before(async () => {
    cloud = await startTestCloud({ env: { SVC_INFERENCE_CONCURRENCY: String(POOL), SVC_INFERENCE_MAX_QUEUE: String(MAX_QUEUE) } });
    client = (await newAccount(cloud)).client;
    await client.createDeployment({ slug, target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    // Load the model before the ordering tests, so no stream pays for it.
    assert.equal((await post({ messages, max_tokens: 2 })).status, 200);
  });
  after(async () => cloud?.dispose());

  it(`streams ${POOL} requests at once: every one has its first token before any finishes`, async () => {
    const log: string[] = [];
    const streams = Array.from({ length: POOL }, (_, i) => open(String(i), LONG, log));
    await Promise.all(streams.map((s) => s.ended));
    assertAllStartedBeforeAnyEnded(log);
  });

  it("answers 429 beyond the queue bound while the pool is busy; hanging up frees the slots", async () => {
    const long = Array.from({ length: POOL }, (_, i) => open(`long${i}`, LONG));
    await Promise.all(long.map((s) => s.first));
    // All contexts busy: MAX_QUEUE of these wait, the rest are refused at once.
    const extra = Array.from({ length: MAX_QUEUE + 2 }, () => post({ messages, max_tokens: 4 }));
    // Only refusals can settle while the long streams hold every slot: take the first two.
    const settled = await new Promise<Response[]>((resolve, reject) => {
      const seen: Response[] = [];
      for (const response of extra) response.then((r) => seen.push(r) === 2 && resolve(seen), reject);
    });
    for (const refused of settled) {
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get("retry-after")) >= 1);
      assert.equal(((await refused.json()) as { error: { type: string } }).error.type, "rate_limit_error");
    }
    // The clients of the long streams hang up: their slots go to the waiting requests, which are
    // answered long before the long streams could have ended on their own.
    for (const s of long) s.abort();
    const answers = await Promise.all(extra);
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 429, 429]);
    await Promise.all(long.map((s) => s.ended));
    // And the pool is whole again: as many streams as before run side by side.
    const log: string[] = [];
    await Promise.all(Array.from({ length: POOL }, (_, i) => open(String(i), { ...LONG, n: 2 }, log).ended));
    assertAllStartedBeforeAnyEnded(log);
  });

  it("a seeded answer is the same alone and next to other requests on the pool", async () => {
    const seeded = { messages, max_tokens: 40, temperature: 1.2, seed: 7, frequency_penalty: 0.5, logprobs: true, top_logprobs: 2 };
    type Answer = { choices: { message: { content: string }; logprobs: { content: { token: string; logprob: number }[] } }[] };
    const ask = async (body: Record<string, unknown>) => {
      const response = await post(body);
      assert.equal(response.status, 200);
      return (await response.json()) as Answer;
    };
    const alone = await ask(seeded);
    // Next to it: the same request twice, another seed, a grammar, a biased and penalised one.
    const together = await Promise.all([
      ask(seeded),
      ask({ ...seeded, seed: 8 }),
      ask({ messages, max_tokens: 40, temperature: 1, response_format: { type: "json_object" } }),
      ask(seeded),
      ask({ messages, max_tokens: 40, temperature: 1, presence_penalty: 2, logit_bias: { 101: 50 } }),
    ]);
    const afterwards = await ask(seeded);
    for (const answer of [together[0], together[3], afterwards]) {
      assert.equal(answer.choices[0].message.content, alone.choices[0].message.content);
      assert.deepEqual(answer.choices[0].logprobs, alone.choices[0].logprobs);
    }
    assert.notEqual(together[1].choices[0].message.content, alone.choices[0].message.content, "another seed, another answer");
  });
});

function assertAllStartedBeforeAnyEnded(log: string[]): void {
  const lastFirst = Math.max(...log.map((e, i) => (e.startsWith("first:") ? i : -1)));
  const firstEnd = log.findIndex((e) => e.startsWith("end:"));
  assert.equal(log.length, 2 * POOL, log.join(" "));
  assert.ok(lastFirst < firstEnd, `one stream ended before another started (a queue, not a pool): ${log.join(" ")}`);
}
