/**
 * The studio coerces no types either: a body it relays is checked with the cloud's schema (server-shared/serveRoute.ts),
 * so `{"enabled":"false"}` is a 400 there too, and Run training (`svc start`) refuses a config the trainer would refuse
 * before it uploads anything, naming every bad field. A real studio server and a real cloud on loopback.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { deploymentsApi } from "../../sdk/api/deployments.js";
import { startStudioStack, studioRequest, projectClient, type StudioStack } from "../support/studioStack.js";
import { replaceOnce } from "../support/text.js";

/** For each field of a body schema, values of JSON types it does not take (a string for a boolean, a number for a string...). */
function wrongTypeCases(body: TSchema): { field: string; value: unknown }[] {
  const typesOf = (schema: TSchema): string[] => (Array.isArray(schema.anyOf) ? (schema.anyOf as TSchema[]).flatMap(typesOf) : [String(schema.type)]);
  const samples: [unknown, string][] = [
    ["false", "string"],
    ["7", "string"],
    [7, "integer"],
    [true, "boolean"],
    [null, "null"],
    [[], "array"],
    [{}, "object"],
  ];
  return Object.entries(body.properties as Record<string, TSchema>).flatMap(([field, schema]) => {
    const accepted = typesOf(schema).flatMap((t) => (t === "number" ? ["number", "integer"] : [t]));
    return samples.filter(([, type]) => !accepted.includes(type)).map(([value]) => ({ field, value }));
  });
}

describe("studio: relayed bodies without coercion, and svc start's config check", function () {
  this.timeout(120_000);
  let stack: StudioStack;
  let deploymentId: string;

  before(async () => {
    stack = await startStudioStack();
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "studio-typed", target: { kind: "base_model", name: "svc-tiny" }, enabled: false },
    });
    assert.equal(created.status, 201, created.text);
    deploymentId = created.json.id;
  });
  after(async () => stack?.stop());

  it('{"enabled":"false"} through the studio is the cloud\'s 400 and changes nothing', async () => {
    const res = await studioRequest(stack.studio, "PATCH", `/api/deployments/${deploymentId}`, { body: { enabled: "false" } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.code, "invalid_request");
    assert.equal(res.json.error.message, "enabled must be a boolean");
    assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${deploymentId}`)).json.enabled, false);
  });

  it("a value of the wrong type in any field of a deployment body is a 400 naming it, and nothing is created or changed", async () => {
    const before = (await studioRequest(stack.studio, "GET", "/api/deployments")).json;
    const bodies = [
      {
        method: "POST",
        url: "/api/deployments",
        schema: deploymentsApi.createDeployment.body,
        valid: { slug: "studio-new", target: { kind: "base_model", name: "svc-tiny" } },
      },
      { method: "PATCH", url: `/api/deployments/${deploymentId}`, schema: deploymentsApi.updateDeployment.body, valid: {} },
    ];
    let cases = 0;
    for (const body of bodies) {
      for (const { field, value } of wrongTypeCases(body.schema)) {
        const res = await studioRequest(stack.studio, body.method, body.url, { body: { ...body.valid, [field]: value } });
        assert.equal(res.status, 400, `${field}=${JSON.stringify(value)}: ${res.text}`);
        assert.ok(res.json.error.message.includes(field), `${field}: ${res.json.error.message}`);
        cases++;
      }
    }
    assert.ok(cases > 50, `${cases} cases`);
    assert.deepEqual((await studioRequest(stack.studio, "GET", "/api/deployments")).json, before);
  });

  it("Run training with a config the trainer refuses lists every bad field and uploads nothing", async () => {
    const source = path.join(stack.projectDir, "src", "svc", "index.ts");
    writeFileSync(
      source,
      replaceOnce(replaceOnce(readFileSync(source, "utf8"), "maxSteps: 60", "maxSteps: -5"), "learningRate: 3e-3", 'learningRate: "fast" as unknown as number'),
    );
    // The answer ends when svc start does: its whole output.
    const run = await studioRequest(stack.studio, "POST", "/api/train");
    assert.equal(run.status, 200, run.text);
    assert.match(run.text, /maxSteps must be an integer from 1 to 1000000; learningRate must be a number between 0 and 1/);
    assert.deepEqual(await projectClient(stack).listJobs(), []);
    const datasets = path.join(stack.cloud.dataDir, "datasets");
    assert.deepEqual(existsSync(datasets) ? readdirSync(datasets) : [], [], "no dataset was uploaded");
  });
});
