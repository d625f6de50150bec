/**
 * Structured output and tool calls cost (issue 13): latency of a `json_schema` answer and of a forced tool call on
 * svc-tiny through the edge, each against plain chat on the same prompt and token budget, measured in turn request by
 * request so the machine's noise hits all three alike. The grammar's cost shows as the ratio.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCloud } from "../../cloud/serve.js";
import { CloudClient } from "../../sdk/client.js";
import { percentile, report } from "./stats.js";

const ROUNDS = 40;
const messages = [{ role: "user", content: "Which city is sunny today?" }];
const schema = {
  type: "object",
  properties: { city: { type: "string", enum: ["Paris", "Rome", "Oslo"] }, degrees: { type: "integer" } },
  required: ["city", "degrees"],
  additionalProperties: false,
};
const bodies = {
  plain: { messages, max_tokens: 24, temperature: 0 },
  json: { messages, max_tokens: 24, temperature: 0, response_format: { type: "json_schema", json_schema: { name: "weather", strict: true, schema } } },
  tool: {
    messages,
    max_tokens: 24,
    temperature: 0,
    tools: [{ type: "function", function: { name: "get_weather", parameters: schema } }],
    tool_choice: { type: "function", function: { name: "get_weather" } },
  },
};

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-structured-"));
const cloud = await startCloud({ dataDir: path.join(dir, "cloud"), port: 0, edgePort: 0 });
try {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  await client.createDeployment({ slug: "bench-structured", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
  const url = `${cloud.edgeUrl}/d/bench-structured/v1/chat/completions`;
  const ask = async (body: object) => {
    const t = performance.now();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    return performance.now() - t;
  };
  const times = { plain: [] as number[], json: [] as number[], tool: [] as number[] };
  for (const kind of ["plain", "json", "tool"] as const) await ask(bodies[kind]); // warm-up: model load, grammar cache
  for (let i = 0; i < ROUNDS; i++) for (const kind of ["plain", "json", "tool"] as const) times[kind].push(await ask(bodies[kind]));
  for (const list of Object.values(times)) list.sort((a, b) => a - b);
  report("json_schema answer p50 (svc-tiny, 24 tokens)", percentile(times.json, 50), "ms", "plain chat p50", percentile(times.plain, 50), false);
  report("forced tool call p50 (svc-tiny, 24 tokens)", percentile(times.tool, 50), "ms", "plain chat p50", percentile(times.plain, 50), false);
} finally {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
}
