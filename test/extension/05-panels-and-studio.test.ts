/** The detail panels speak the protocol (ready handshake, requests, streams); the studio serves the browser SPA. */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { PanelMessageEvent } from "../../extension/panels/detailPanels.js";
import { eventually, svcApi } from "./support/extension.js";
import { completedJob, testEndpoint } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

function recordMessages(source: { onDidReceiveMessage: vscode.Event<PanelMessageEvent> }): { methods: (id: string) => string[]; dispose(): void } {
  const seen: PanelMessageEvent[] = [];
  const subscription = source.onDidReceiveMessage((e) => seen.push(e));
  return { methods: (id) => seen.filter((e) => e.id === id).map((e) => e.method), dispose: () => subscription.dispose() };
}

describe("panels and studio", () => {
  // What the earlier suites leave (found at once in the normal order), made here when run alone.
  before(async function () {
    this.timeout(300_000);
    await testEndpoint();
  });
  beforeEach(async () => {
    (await svcApi()).services.prompts = new ScriptedPrompts();
  });

  it("a new Job panel says ready, loads its job and opens the event stream", async () => {
    const { services } = await svcApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const job = await completedJob();
    const recorder = recordMessages(services.jobPanels);
    try {
      await vscode.commands.executeCommand("svc.openJob", job.id);
      await eventually("the job view's requests", () => {
        const methods = recorder.methods(job.id);
        return methods.includes("webview/ready") && methods.includes("api/getJob") && methods.includes("stream/open");
      });
      assert.equal(recorder.methods(job.id)[0], "webview/ready");
    } finally {
      recorder.dispose();
    }
  });

  it("a new Endpoint panel says ready and loads its deployment and keys", async () => {
    const { services } = await svcApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const deployment = await testEndpoint();
    const recorder = recordMessages(services.endpointPanels);
    try {
      await vscode.commands.executeCommand("svc.openEndpoint", deployment.id);
      await eventually("the endpoint view's requests", () => {
        const methods = recorder.methods(deployment.id);
        return methods.includes("api/getDeployment") && methods.includes("api/listKeys");
      });
    } finally {
      recorder.dispose();
    }
  });

  it("Open Studio in Browser opens the in-process studio's SPA through asExternalUri", async () => {
    const uri = await vscode.commands.executeCommand<vscode.Uri>("svc.openStudioInBrowser");
    assert.ok(uri);
    const { services } = await svcApi();
    const { url } = await services.studio.endpoint();
    const page = await fetch(url).then((r) => r.text());
    assert.match(page, /<meta name="svc-studio-token" content="(?!__SVC_STUDIO_TOKEN__)[\w-]{20,}"/);
  });

  it("Refresh reloads both trees", async () => {
    const { services } = await svcApi();
    await Promise.all([completedJob(), testEndpoint()]);
    // An endpoint made behind the extension's back (straight through the studio), which only a reload shows.
    const { url, token } = await services.studio.endpoint();
    const studio = (route: string, init: RequestInit = {}) =>
      fetch(`${url}${route}`, { ...init, headers: { "x-svc-studio-token": token, "content-type": "application/json" } }).then((r) => r.json());
    const slug = `refresh-${Date.now().toString(36)}`;
    await studio("/api/deployments", { method: "POST", body: JSON.stringify({ slug, target: { kind: "base_model", name: "svc-tiny" } }) });
    assert.equal(
      services.endpoints.current.some((d) => d.slug === slug),
      false,
      "not known before the refresh",
    );
    await vscode.commands.executeCommand("svc.refresh");
    assert.ok(
      services.endpoints.current.some((d) => d.slug === slug),
      "the new endpoint after the refresh",
    );
    const jobs = (await studio("/api/jobs")) as { id: string }[];
    assert.deepEqual(
      services.jobs.current.map((job) => job.id),
      jobs.map((job) => job.id),
    );
  });
});
