/**
 * The control API coerces nothing: a body's value of the wrong type is a 400 naming the field, and nothing is written.
 * A real cloud process on loopback (SQLite, or PostgreSQL with SVC_TEST_DATABASE_URL). The wrong values are generated
 * from the contract's own schemas, field by field, for the bodies that create or change something: projects, jobs
 * (and every field of a job's config), deployments, keys and models. A job config the trainer would refuse is a 400
 * listing every bad field; a query's numbers are read from their canonical spelling only; and the edge refuses a user
 * message whose content is null, in OpenAI's error shape.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { accountsApi } from "../../sdk/api/accounts.js";
import { deploymentsApi } from "../../sdk/api/deployments.js";
import { jobsApi } from "../../sdk/api/jobs.js";
import { keysApi } from "../../sdk/api/keys.js";
import { modelsApi } from "../../sdk/api/models.js";
import { validateTrainerConfig } from "../../sdk/trainer/config.js";
import { writeTinyModel } from "../support/modelFiles.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, type Account } from "../support/api.js";

type JsonType = "string" | "integer" | "number" | "boolean" | "null" | "array" | "object";

/** The JSON types a schema accepts (a union: any of its members'). */
function acceptedTypes(schema: TSchema): Set<JsonType> {
  if (Array.isArray(schema.anyOf)) return new Set((schema.anyOf as TSchema[]).flatMap((member) => [...acceptedTypes(member)]));
  const type = schema.type as JsonType;
  // An integer is a number too, but a number field takes integers.
  return new Set(type === "number" ? ["number", "integer"] : [type]);
}

/**
 * Values of every JSON type, each spelled as what a coercing validator would take for the right one: "false" and "0"
 * for a boolean, "5" for a number, 123 and true for a string.
 */
const SAMPLES: { value: unknown; type: JsonType }[] = [
  { value: "false", type: "string" },
  { value: "true", type: "string" },
  { value: "5", type: "string" },
  { value: 123, type: "integer" },
  { value: 0, type: "integer" },
  { value: 1, type: "integer" },
  { value: 1.5, type: "number" },
  { value: true, type: "boolean" },
  { value: false, type: "boolean" },
  { value: null, type: "null" },
  { value: [], type: "array" },
  { value: ["x"], type: "array" },
  { value: {}, type: "object" },
];

/** For each field of a body schema, the values of types it does not accept. */
function wrongTypeCases(body: TSchema): { field: string; value: unknown }[] {
  const properties = body.properties as Record<string, TSchema>;
  return Object.entries(properties).flatMap(([field, schema]) => {
    const accepted = acceptedTypes(schema);
    return SAMPLES.filter((s) => !accepted.has(s.type)).map((s) => ({ field, value: s.value }));
  });
}

/** The JSON type of a value in a valid job config, and values of other types for it. */
function wrongConfigValues(good: unknown): unknown[] {
  const kind = good === null ? "null" : Array.isArray(good) ? "array" : typeof good;
  return SAMPLES.map((s) => s.value).filter((value) => {
    const other = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    return other !== kind;
  });
}

describe("control API validation: no coercion, every bad field named, nothing written", () => {
  let cloud: TestCloud;
  let alice: Account;
  let workerToken: string;
  let modelFile: string;
  let deploymentId: string;
  /** What the store held before the bad requests; compared after them. */
  let stored: Record<string, unknown>;
  let sent = 0;

  const snapshot = async () => ({
    projects: (await http(cloud, "GET", "/v1/projects", { token: alice.token })).body,
    jobs: await alice.client.listJobs(),
    deployments: await alice.client.listDeployments(),
    keys: await alice.client.listDeploymentKeys(deploymentId),
    models: (await http(cloud, "GET", "/v1/models", { token: alice.token })).body,
  });

  /** Sends a body that must be refused: a 400 in the control envelope whose message names `field`. */
  const refused = async (method: string, url: string, body: unknown, field: string, token = alice.token) => {
    sent++;
    const res = await http(cloud, method, url, { token, body });
    const what = `${method} ${url} ${JSON.stringify(body)}`;
    assert.equal(res.status, 400, `${what}: ${res.text}`);
    assert.equal(res.body.error.code, "invalid_request", what);
    assert.equal(typeof res.body.error.requestId, "string", what);
    assert.ok(res.body.error.message.includes(field), `${what}: "${res.body.error.message}" names ${field}`);
    return res.body.error.message as string;
  };

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    workerToken = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    modelFile = path.join(cloud.home, "typed.gguf");
    await writeTinyModel(modelFile, { architecture: "llama", name: "typed" });
    const deployment = await alice.client.createDeployment({
      slug: "typed-values",
      target: { kind: "base_model", name: "svc-tiny" },
      authMode: "none",
      enabled: false,
    });
    deploymentId = deployment.id;
    await alice.client.createDeploymentKey(deploymentId, { label: "first" });
    stored = await snapshot();
  });
  after(async () => cloud?.dispose());

  it('{"enabled":"false"} is a 400 and leaves the deployment as it was', async () => {
    assert.equal(
      await refused("PATCH", `/v1/deployments/${deploymentId}?projectId=${alice.projectId}`, { enabled: "false" }, "enabled"),
      "enabled must be a boolean",
    );
    assert.equal((await alice.client.getDeployment(deploymentId)).enabled, false);
  });

  it('{"name":123} is a 400, not a project called "123"', async () => {
    assert.equal(await refused("POST", "/v1/projects", { name: 123 }, "name"), "name must be 1 to 80 characters");
  });

  it("a job config the trainer would refuse is a 400 listing every bad field with its path", async () => {
    const message = await refused(
      "POST",
      "/v1/jobs",
      { projectId: alice.projectId, name: "bad", config: { model: "svc-tiny", maxSteps: -5, learningRate: "fast" } },
      "config.maxSteps",
    );
    assert.equal(message, "config.maxSteps: must be an integer from 1 to 1000000; config.learningRate: must be a number between 0 and 1");
    const nested = await refused(
      "POST",
      "/v1/jobs",
      {
        projectId: alice.projectId,
        name: "bad",
        config: { maxSteps: 1, numTrainEpochs: 2, lora: { r: "8", targetModules: ["q_proj", "wq"] }, schedule: "step", backend: "cuda" },
      },
      "config.lora.r",
    );
    assert.equal(
      nested,
      'config.maxSteps: or numTrainEpochs must be set (exactly one of them); config.schedule: must be "cosine" or "linear"; config.backend: must be one of auto, torch, tfjs, got "cuda"; ' +
        'config.lora.r: must be an integer from 1 to 256; config.lora.targetModules: has "wq"; choose from q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj',
    );
  });

  it("a job config that createTrainer produces is accepted as it is", async () => {
    const config = validateTrainerConfig({ name: "good", model: "svc-tiny", dataset: "train.jsonl", maxSteps: 3, maxSeqLength: 64, backend: "tfjs" });
    const res = await http(cloud, "POST", "/v1/jobs", { token: alice.token, body: { projectId: alice.projectId, name: "good", config } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.config, config);
    await alice.client.cancelJob(res.body.id);
    stored = { ...stored, jobs: await alice.client.listJobs() };
  });

  it("a value of the wrong type in any field of a job, deployment, key or model body is a 400 naming it", async () => {
    const bodies: { method: string; url: string; schema: TSchema; valid: Record<string, unknown>; token?: () => string }[] = [
      { method: "POST", url: "/v1/projects", schema: accountsApi.createProject.body, valid: { name: "typed" } },
      { method: "POST", url: "/v1/jobs", schema: jobsApi.createJob.body, valid: { projectId: alice.projectId, name: "typed", config: { maxSteps: 1 } } },
      {
        method: "POST",
        url: "/v1/deployments",
        schema: deploymentsApi.createDeployment.body,
        valid: { projectId: alice.projectId, slug: "typed-new", target: { kind: "base_model", name: "svc-tiny" } },
      },
      { method: "PATCH", url: `/v1/deployments/${deploymentId}?projectId=${alice.projectId}`, schema: deploymentsApi.updateDeployment.body, valid: {} },
      {
        method: "POST",
        url: `/v1/deployments/${deploymentId}/keys?projectId=${alice.projectId}`,
        schema: keysApi.createDeploymentKey.body,
        valid: { label: "typed" },
      },
      { method: "POST", url: "/v1/models", schema: modelsApi.registerModel.body, valid: { name: "typed", path: modelFile }, token: () => workerToken },
    ];
    let cases = 0;
    for (const body of bodies) {
      for (const { field, value } of wrongTypeCases(body.schema)) {
        await refused(body.method, body.url, { ...body.valid, [field]: value }, field, body.token?.());
        cases++;
      }
    }
    assert.ok(cases > 150, `${cases} cases`);
  });

  it("a value of the wrong type in any field of a job config is a 400 naming config.<field>", async () => {
    const config = validateTrainerConfig({
      name: "typed",
      model: "svc-tiny",
      dataset: "train.jsonl",
      maxSteps: 3,
      warmupSteps: 1,
      maxSeqLength: 64,
      backend: "tfjs",
    }) as Record<string, unknown>;
    const fields = { ...config, ...Object.fromEntries(Object.entries(config.lora as object).map(([k, v]) => [`lora.${k}`, v])) };
    let cases = 0;
    for (const [field, good] of Object.entries(fields)) {
      for (const value of wrongConfigValues(good)) {
        const bad = field.startsWith("lora.") ? { ...config, lora: { ...(config.lora as object), [field.slice(5)]: value } } : { ...config, [field]: value };
        await refused("POST", "/v1/jobs", { projectId: alice.projectId, name: "typed", config: bad }, `config.${field}:`);
        cases++;
      }
    }
    assert.ok(cases > 100, `${cases} cases`);
  });

  it("a query's number is read from its canonical spelling only", async () => {
    const job = await alice.client.createJob({ name: "query", config: { maxSteps: 1 } });
    await alice.client.cancelJob(job.id);
    stored = { ...stored, jobs: await alice.client.listJobs() };
    const adapter = (step: string) =>
      http(cloud, "GET", `/v1/jobs/${job.id}/adapter?projectId=${alice.projectId}&format=gguf&step=${step}`, { token: alice.token });
    for (const step of ["1.0", "01", "%201", "1e0", "0x1", "+1", "one", ""]) {
      const res = await adapter(step);
      assert.equal(res.status, 400, `step=${step}: ${res.text}`);
      assert.equal(res.body.error.message, "step must be the step of one of the job's checkpoints", `step=${step}`);
    }
    // The canonical spelling passes validation: the job simply has no checkpoint there.
    const canonical = await adapter("1");
    assert.notEqual(canonical.body.error.message, "step must be the step of one of the job's checkpoints", canonical.text);
    for (const lastEventId of ["1.0", "01", "1e0", "-1", "x"]) {
      const res = await http(cloud, "GET", `/v1/jobs/${job.id}/events?projectId=${alice.projectId}&lastEventId=${lastEventId}`, { token: alice.token });
      assert.equal(res.status, 400, `lastEventId=${lastEventId}: ${res.text}`);
      assert.equal(res.body.error.message, "lastEventId must be the seq of an event (a non-negative integer)");
    }
  });

  it("nothing was written by any refused request", async () => {
    assert.ok(sent > 250, `${sent} refused requests`);
    assert.deepEqual(await snapshot(), stored);
  });

  it("the edge refuses a user message whose content is null with OpenAI's 400", async () => {
    await alice.client.updateDeployment(deploymentId, { enabled: true });
    for (const role of ["user", "system", "tool"]) {
      const res = await fetch(`${cloud.edgeUrl}/d/typed-values/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "svc-tiny", messages: [{ role, content: null, tool_call_id: "c1" }] }),
      });
      const body = await res.json();
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error.type, "invalid_request_error");
      assert.equal(body.error.param, "messages[0].content");
      assert.match(body.error.message, /^messages\[0\]\.content must be a string or an array of text parts/);
    }
  });
});
