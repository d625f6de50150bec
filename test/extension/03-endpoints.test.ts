/** Create Endpoint, Enable/Disable, Set Auth Mode, Copy URL, Open Endpoint and the Endpoints tree. */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { Deployment } from "../../sdk/wire.js";
import { eventually, svcApi } from "./support/extension.js";
import { completedJob, SLUG, testEndpoint } from "./support/fixtures.js";
import { pickContaining, ScriptedPrompts } from "./support/scriptedPrompts.js";

const MISSING = "00000000-0000-0000-0000-000000000000";

describe("endpoints", () => {
  // What the earlier suites leave (found at once in the normal order), made here when run alone.
  before(async function () {
    this.timeout(300_000);
    await completedJob();
  });
  let prompts: ScriptedPrompts;
  beforeEach(async () => {
    prompts = new ScriptedPrompts();
    (await svcApi()).services.prompts = prompts;
  });

  async function endpointRow(slug: string) {
    const { services } = await svcApi();
    await services.endpoints.refresh();
    const node = (await services.endpoints.getChildren()).find((n) => n.kind === "endpoint" && n.deployment.slug === slug);
    return node && services.endpoints.getTreeItem(node);
  }

  it("Create Endpoint publishes a completed job's adapter and opens its panel", async () => {
    const { services } = await svcApi();
    const completed = await completedJob();
    await services.jobs.refresh(); // the pick lists the tree's jobs
    prompts.answerPicks(pickContaining(completed.id.slice(0, 8)), pickContaining("fixed_api_key"));
    prompts.answerInputs("", SLUG); // the empty slug is refused by validation first
    const created = await vscode.commands.executeCommand<Deployment>("svc.createEndpoint");
    assert.deepEqual(prompts.errors(), []);
    assert.deepEqual(prompts.validationMessages, ["Enter a slug."]);
    assert.equal(created.slug, SLUG);
    assert.deepEqual(created.target, { kind: "adapter", jobId: completed.id });
    assert.ok(services.endpointPanels.isOpen(created.id));
    const item = await endpointRow(SLUG);
    assert.equal(item?.description, `Final adapter (job ${completed.id.slice(0, 8)}) · fixed_api_key · enabled`);
    assert.equal(item?.contextValue, "svc.endpoint.enabled");
    assert.equal(item?.command?.command, "svc.openEndpoint");
  });

  it("Create Endpoint with a slug that is taken shows the cloud's 409 message", async () => {
    await testEndpoint();
    const job = await completedJob();
    prompts.answerPicks(pickContaining("fixed_api_key"));
    prompts.answerInputs(SLUG);
    const result = await vscode.commands.executeCommand("svc.createEndpoint", { kind: "job", job });
    assert.equal(result, undefined);
    assert.equal(prompts.errors().length, 1);
    assert.match(prompts.errors()[0]!, /slug|taken|exists/i);
  });

  it("Enable/Disable toggles the endpoint and the tree shows the badge", async () => {
    const deployment = await testEndpoint();
    const disabled = await vscode.commands.executeCommand<Deployment>("svc.toggleEndpoint", { kind: "endpoint", deployment });
    assert.equal(disabled.enabled, false);
    assert.match(String((await endpointRow(SLUG))?.description), /· disabled$/);
    assert.equal((await endpointRow(SLUG))?.contextValue, "svc.endpoint.disabled");
    const enabled = await vscode.commands.executeCommand<Deployment>("svc.enableEndpoint", deployment.id);
    assert.equal(enabled.enabled, true);
    assert.match(String((await endpointRow(SLUG))?.description), /· enabled$/);
  });

  it("Enable/Disable of an endpoint that does not exist shows the cloud's message", async () => {
    assert.equal(await vscode.commands.executeCommand("svc.toggleEndpoint", MISSING), undefined);
    assert.match(prompts.errors()[0] ?? "", /not found/i);
  });

  it("Set Auth Mode switches to none and back", async () => {
    const deployment = await testEndpoint();
    prompts.answerPicks(pickContaining("none"));
    const open = await vscode.commands.executeCommand<Deployment>("svc.setAuthMode", deployment.id);
    assert.equal(open.authMode, "none");
    assert.match(String((await endpointRow(SLUG))?.description), /· none ·/);
    prompts.answerPicks(pickContaining("fixed_api_key"));
    assert.equal((await vscode.commands.executeCommand<Deployment>("svc.setAuthMode", deployment.id)).authMode, "fixed_api_key");
  });

  it("Set Auth Mode of an endpoint that does not exist shows the cloud's message", async () => {
    assert.equal(await vscode.commands.executeCommand("svc.setAuthMode", MISSING), undefined);
    assert.match(prompts.errors()[0] ?? "", /not found/i);
  });

  it("Copy Endpoint URL puts the endpoint URL on the clipboard", async () => {
    const deployment = await testEndpoint();
    const url = await vscode.commands.executeCommand<string>("svc.copyEndpointUrl", { kind: "endpoint", deployment });
    assert.equal(url, deployment.url);
    assert.match(url, new RegExp(`^http://${SLUG}\\.`));
    assert.equal(await eventually("the clipboard to hold the URL", async () => (await vscode.env.clipboard.readText()) === url), true);
  });

  it("Copy Endpoint URL of an endpoint that does not exist shows the cloud's message", async () => {
    assert.equal(await vscode.commands.executeCommand("svc.copyEndpointUrl", MISSING), undefined);
    assert.match(prompts.errors()[0] ?? "", /not found/i);
  });

  it("Open Endpoint re-focuses the one panel of an endpoint", async () => {
    const { services } = await svcApi();
    const deployment = await testEndpoint();
    await vscode.commands.executeCommand("svc.openEndpoint", { kind: "endpoint", deployment });
    await vscode.commands.executeCommand("svc.openEndpoint", deployment.id);
    assert.equal(services.endpointPanels.openIds.filter((id) => id === deployment.id).length, 1);
  });
});
