/** Issue Key (validation, plaintext shown once) and Revoke Key (confirmation), against the real cloud. */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { Deployment, DeploymentKey } from "../../sdk/wire.js";
import { svcApi } from "./support/extension.js";
import { activeKey, testEndpoint } from "./support/fixtures.js";
import { pickContaining, ScriptedPrompts } from "./support/scriptedPrompts.js";

const MISSING = "00000000-0000-0000-0000-000000000000";

describe("keys", () => {
  // What the earlier suites leave (found at once in the normal order), made here when run alone.
  before(async function () {
    this.timeout(300_000);
    await testEndpoint();
  });
  let prompts: ScriptedPrompts;
  let deployment: Deployment;
  beforeEach(async () => {
    const { services } = await svcApi();
    prompts = new ScriptedPrompts();
    services.prompts = prompts;
    deployment = await testEndpoint();
  });

  it("Issue Key validates the label, shows the plaintext once in a modal and copies it on request", async () => {
    const { services } = await svcApi();
    prompts.answerInputs("", "x".repeat(81), "  ci runner  ", "", "", "");
    prompts.answerPicks(pickContaining("Never"));
    prompts.answerMessages("Copy");
    const issued = await vscode.commands.executeCommand<DeploymentKey>("svc.issueKey", { kind: "endpoint", deployment });
    assert.deepEqual(prompts.validationMessages, ["Enter a label (1 to 80 characters).", "Label is 81 characters; the limit is 80."]);
    assert.equal(issued.label, "ci runner");
    assert.equal("key" in issued, false, "the command never hands the plaintext on");
    const shown = prompts.shown.find((m) => m.modal && m.level === "info")!;
    assert.deepEqual(shown.actions, ["Copy"]);
    const plaintext = /svc_live_[0-9A-Za-z]+/.exec(shown.detail ?? "")?.[0];
    assert.ok(plaintext, "the plaintext is in the modal");
    assert.ok(plaintext.startsWith(issued.prefix));
    assert.equal(await vscode.env.clipboard.readText(), plaintext);
    const keys = await services.endpoints.keysOf(deployment.id);
    assert.ok(keys.some((k) => k.id === issued.id && k.enabled));
    assert.ok(!JSON.stringify(keys).includes(plaintext), "the cloud never returns it again");
    const row = (await services.endpoints.getChildren({ kind: "endpoint", deployment })).find((n) => n.kind === "key" && n.key.id === issued.id)!;
    assert.equal(services.endpoints.getTreeItem(row).contextValue, "svc.key.active");
  });

  it("Issue Key takes an expiry, limits and a budget through quick inputs, as the studio's form", async () => {
    const before = Date.now();
    prompts.answerInputs("with rules", "thirty", "30", "", "100000");
    prompts.answerPicks(pickContaining("In 1 hour"), pickContaining("Per day"));
    prompts.answerMessages(undefined);
    const issued = await vscode.commands.executeCommand<DeploymentKey>("svc.issueKey", { kind: "endpoint", deployment });
    assert.deepEqual(prompts.validationMessages, ["a whole number from 1, or blank for none"]);
    assert.deepEqual(issued.limits, { requestsPerMinute: 30, tokensPerMinute: null });
    assert.deepEqual(issued.budget, { tokens: 100000, period: "day" });
    const expires = Date.parse(issued.expiresAt ?? "");
    assert.ok(expires >= before + 3_600_000 && expires <= Date.now() + 3_600_000, `expiresAt ${issued.expiresAt}`);
  });

  it("Issue Key dismissed at a rule's box issues nothing", async () => {
    const { services } = await svcApi();
    const before = (await services.endpoints.keysOf(deployment.id)).length;
    prompts.answerInputs("half-made", "30", undefined);
    prompts.answerPicks(pickContaining("Never"));
    assert.equal(await vscode.commands.executeCommand("svc.issueKey", deployment.id), undefined);
    assert.equal((await services.endpoints.keysOf(deployment.id)).length, before);
  });

  it("Issue Key dismissed at the label box issues nothing", async () => {
    const { services } = await svcApi();
    const before = (await services.endpoints.keysOf(deployment.id)).length;
    prompts.answerInputs(undefined);
    assert.equal(await vscode.commands.executeCommand("svc.issueKey", deployment.id), undefined);
    assert.equal((await services.endpoints.keysOf(deployment.id)).length, before);
  });

  it("Issue Key for an endpoint that does not exist shows the cloud's message", async () => {
    assert.equal(await vscode.commands.executeCommand("svc.issueKey", MISSING), undefined);
    assert.match(prompts.errors()[0] ?? "", /not found/i);
  });

  it("Revoke Key asks first; declining keeps the key, confirming revokes it and the tree marks it", async () => {
    const { services } = await svcApi();
    const key = await activeKey(deployment);
    prompts.answerMessages(undefined, "Revoke");
    assert.equal(await vscode.commands.executeCommand("svc.revokeKey", { kind: "key", deploymentId: deployment.id, key }), false);
    assert.equal((await services.endpoints.keysOf(deployment.id)).find((k) => k.id === key.id)?.enabled, true);
    assert.equal(await vscode.commands.executeCommand("svc.revokeKey", { kind: "key", deploymentId: deployment.id, key }), true);
    const revoked = (await services.endpoints.keysOf(deployment.id)).find((k) => k.id === key.id)!;
    assert.equal(revoked.enabled, false);
    const item = services.endpoints.getTreeItem({ kind: "key", deploymentId: deployment.id, key: revoked });
    assert.match(String(item.description), /revoked$/);
    assert.equal(item.contextValue, "svc.key.revoked");
    assert.ok(prompts.shown.filter((m) => m.level === "warning" && m.modal).length === 2);
  });

  it("Revoke Key of a key that does not exist shows the cloud's message", async () => {
    prompts.answerMessages("Revoke");
    assert.equal(await vscode.commands.executeCommand("svc.revokeKey", { deploymentId: deployment.id, keyId: MISSING }), undefined);
    assert.match(prompts.errors()[0] ?? "", /not found/i);
  });
});
