import assert from "node:assert/strict";
import { ConflictError, NotFoundError, BadRequestError } from "../../sdk/errors.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, registerTestModel, type Account } from "../support/api.js";

describe("cloud API: deployments and keys", () => {
  let cloud: TestCloud;
  let alice: Account;
  let bob: Account;
  const baseTarget = { kind: "base_model", name: "test-base" } as const;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    bob = await newAccount(cloud);
    await registerTestModel(cloud, "test-base");
  });
  after(async () => cloud.dispose());

  const create = (account: Account, body: Record<string, unknown>) =>
    http(cloud, "POST", "/v1/deployments", { token: account.token, body: { projectId: account.projectId, ...body } });

  it("rejects requests without a token or with an invalid one (401)", async () => {
    const missing = await http(cloud, "GET", `/v1/deployments?projectId=${alice.projectId}`);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, "unauthorized");
    const invalid = await http(cloud, "GET", `/v1/deployments?projectId=${alice.projectId}`, { token: "svc_anon_nope" });
    assert.equal(invalid.status, 401);
  });

  for (const [slug, why] of [
    ["ab", "too short"],
    ["a".repeat(41), "too long"],
    ["-lead", "leading dash"],
    ["trail-", "trailing dash"],
    ["Upper", "upper case"],
    ["sp ace", "space"],
  ] as const) {
    it(`rejects slug "${slug.slice(0, 12)}" (${why}) with 400 naming the slug rule`, async () => {
      const res = await create(alice, { slug, target: baseTarget });
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /^slug must be 3-40 characters/);
    });
  }

  it("rejects unknown targets with 400 naming the field", async () => {
    const kind = await create(alice, { slug: "kind-bad", target: { kind: "lora" } });
    assert.equal(kind.status, 400);
    assert.match(kind.body.error.message, /^target\.kind must be one of/);
    const model = await create(alice, { slug: "model-bad", target: { kind: "base_model", name: "gpt-9" } });
    assert.equal(model.status, 400);
    assert.match(model.body.error.message, /^target\.name: unknown base model "gpt-9"/);
    const job = await create(alice, { slug: "job-bad", target: { kind: "adapter", jobId: "00000000-0000-0000-0000-000000000000" } });
    assert.equal(job.status, 400);
    assert.match(job.body.error.message, /^target\.jobId: no job/);
    const step = await create(alice, { slug: "step-bad", target: { kind: "checkpoint", jobId: "x", step: -1 } });
    assert.equal(step.status, 400);
    assert.match(step.body.error.message, /^target\.step must be a non-negative integer/);
    const auth = await create(alice, { slug: "auth-bad", target: baseTarget, authMode: "open" });
    assert.equal(auth.status, 400);
    assert.match(auth.body.error.message, /^authMode must be "fixed_api_key" or "none"/);
  });

  it("creates, reads, partially updates, lists and deletes a deployment", async () => {
    const created = await alice.client.createDeployment({ slug: "crud-one", target: baseTarget });
    assert.equal(created.slug, "crud-one");
    assert.deepEqual(created.target, baseTarget);
    assert.equal(created.authMode, "fixed_api_key");
    assert.equal(created.enabled, true);
    assert.equal(created.customDomain, null);
    assert.equal(created.url, `http://crud-one.${cloud.deployDomain}`);
    assert.equal(created.localUrl, `${cloud.edgeUrl}/d/crud-one`);
    const { servedOn, ...detail } = await alice.client.getDeployment(created.id);
    assert.deepEqual(detail, created);
    assert.equal(servedOn?.engine, "llama.cpp", "the detail also says what serves it");
    const disabled = await alice.client.updateDeployment(created.id, { enabled: false });
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.authMode, "fixed_api_key", "a partial update leaves other fields alone");
    const open = await alice.client.updateDeployment(created.id, { authMode: "none" });
    assert.equal(open.authMode, "none");
    assert.equal(open.enabled, false);
    const list = await alice.client.listDeployments();
    assert.ok(list.some((d) => d.id === created.id && d.authMode === "none" && !d.enabled));
    await alice.client.deleteDeployment(created.id);
    await assert.rejects(alice.client.getDeployment(created.id), NotFoundError);
  });

  it("answers 409 with a readable message when the slug is taken, also by a disabled or deleted deployment", async () => {
    const first = await alice.client.createDeployment({ slug: "taken-slug", target: baseTarget, enabled: false });
    const again = await create(bob, { slug: "taken-slug", target: baseTarget });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, "slug_taken");
    assert.equal(again.body.error.message, 'The slug "taken-slug" is already taken. Choose another slug.');
    await alice.client.deleteDeployment(first.id);
    await assert.rejects(alice.client.createDeployment({ slug: "taken-slug", target: baseTarget }), (err: unknown) => {
      assert.ok(err instanceof ConflictError);
      assert.equal(err.status, 409);
      assert.match(err.message, /belonged to a deleted deployment and stays reserved/);
      return true;
    });
  });

  it("hides another project's deployments (404) and refuses foreign project scopes (403)", async () => {
    const mine = await alice.client.createDeployment({ slug: "private-one", target: baseTarget });
    const asBob = await http(cloud, "GET", `/v1/deployments/${mine.id}`, { token: bob.token });
    assert.equal(asBob.status, 404);
    const patch = await http(cloud, "PATCH", `/v1/deployments/${mine.id}`, { token: bob.token, body: { enabled: false } });
    assert.equal(patch.status, 404);
    const keys = await http(cloud, "POST", `/v1/deployments/${mine.id}/keys`, { token: bob.token, body: { label: "x" } });
    assert.equal(keys.status, 404);
    const scope = await http(cloud, "GET", `/v1/deployments?projectId=${alice.projectId}`, { token: bob.token });
    assert.equal(scope.status, 403);
    assert.equal((await alice.client.getDeployment(mine.id)).enabled, true);
  });

  it("issues keys whose plaintext is returned once and never listed or logged", async () => {
    const dep = await alice.client.createDeployment({ slug: "keyed-one", target: baseTarget });
    const created = await alice.client.createDeploymentKey(dep.id, { label: "teammate" });
    assert.match(created.key, /^svc_live_[0-9A-Za-z]{40,}$/);
    assert.equal(created.prefix, created.key.slice(0, 12));
    assert.equal(created.enabled, true);
    assert.equal(created.lastUsedAt, null);
    const listed = await http(cloud, "GET", `/v1/deployments/${dep.id}/keys`, { token: alice.token });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.length, 1);
    assert.equal(listed.body[0].prefix, created.prefix);
    assert.equal("key" in listed.body[0], false);
    assert.equal(listed.text.includes(created.key), false);
    for (const path of [`/v1/deployments?projectId=${alice.projectId}`, `/v1/deployments/${dep.id}`, "/v1/me", "/metrics"]) {
      const res = await http(cloud, "GET", path, { token: alice.token });
      assert.equal(res.text.includes(created.key), false, `${path} leaks the key`);
    }
    const wrongRevoke = await http(cloud, "DELETE", `/v1/deployments/${dep.id}/keys/not-a-key`, { token: alice.token });
    assert.equal(wrongRevoke.status, 404);
    assert.equal(wrongRevoke.text.includes(created.key), false);
    assert.equal(cloud.stderr().includes(created.key), false);
  });

  it("validates key labels (1-80 characters) with a message naming the field", async () => {
    const dep = await alice.client.createDeployment({ slug: "label-check", target: baseTarget });
    for (const label of ["", "x".repeat(81)]) {
      const res = await http(cloud, "POST", `/v1/deployments/${dep.id}/keys`, { token: alice.token, body: { label } });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.message, "label must be 1 to 80 characters");
    }
    const missing = await http(cloud, "POST", `/v1/deployments/${dep.id}/keys`, { token: alice.token, body: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /label/);
    assert.equal((await alice.client.createDeploymentKey(dep.id, { label: "x".repeat(80) })).label.length, 80);
  });

  it("counts key labels in code points after trimming, like the page (issue 12 item 8)", async () => {
    const dep = await alice.client.createDeployment({ slug: "label-rule", target: baseTarget });
    for (const label of ["   ", "\t\n", "🔑".repeat(81)]) {
      const res = await http(cloud, "POST", `/v1/deployments/${dep.id}/keys`, { token: alice.token, body: { label } });
      assert.equal(res.status, 400, JSON.stringify(label));
      assert.equal(res.body.error.message, "label must be 1 to 80 characters");
    }
    assert.equal((await alice.client.createDeploymentKey(dep.id, { label: "🔑".repeat(80) })).label, "🔑".repeat(80));
    // Stored trimmed: what the list shows is what the user meant.
    assert.equal((await alice.client.createDeploymentKey(dep.id, { label: `  ${"x".repeat(80)}  ` })).label, "x".repeat(80));
  });

  it("revokes a key with 204 and keeps it listed as disabled", async () => {
    const dep = await alice.client.createDeployment({ slug: "revoke-one", target: baseTarget });
    const key = await alice.client.createDeploymentKey(dep.id, { label: "temp" });
    const res = await http(cloud, "DELETE", `/v1/deployments/${dep.id}/keys/${key.id}`, { token: alice.token });
    assert.equal(res.status, 204);
    const [listed] = await alice.client.listDeploymentKeys(dep.id);
    assert.equal(listed.id, key.id);
    assert.equal(listed.enabled, false);
  });

  it("maps errors to typed SDK errors that keep status, code and message", async () => {
    await assert.rejects(alice.client.createDeployment({ slug: "x", target: baseTarget }), (err: unknown) => {
      assert.ok(err instanceof BadRequestError);
      assert.equal(err.status, 400);
      assert.equal(err.code, "invalid_request");
      assert.match(err.message, /^slug must be/);
      assert.ok(err.requestId);
      return true;
    });
  });

  it("answers malformed JSON with 400 and the error envelope", async () => {
    const res = await http(cloud, "POST", "/v1/deployments", { token: alice.token, raw: "{nope", headers: { "content-type": "application/json" } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, "invalid_json");
  });
});
