/** Activation, contributions, the welcome states, and getting credentials against the real cloud. */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { EXTENSION_ID, svcApi } from "./support/extension.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

const COMMANDS = [
  "svc.runTraining",
  "svc.issueKey",
  "svc.revokeKey",
  "svc.createEndpoint",
  "svc.toggleEndpoint",
  "svc.setAuthMode",
  "svc.openJob",
  "svc.openEndpoint",
  "svc.cancelJob",
  "svc.deleteJob",
  "svc.copyEndpointUrl",
  "svc.refresh",
  "svc.openStudioInBrowser",
  "svc.previewDatasets",
  "svc.openPlayground",
];

describe("activation", () => {
  it("activates because the workspace contains src/svc/index.ts, without starting the studio", async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, "extension is installed");
    const api = await extension.activate();
    assert.equal(extension.isActive, true);
    // Nothing heavy on the activation path: the studio is created but only starts when asked.
    assert.ok(api.services.studio.current, "a studio is configured for the folder");
  });

  it("registers every command of the manifest", async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const command of COMMANDS) assert.ok(registered.has(command), `${command} is registered`);
  });

  it("finds the workspace's own svc CLI and, with no credentials yet, asks for them", async () => {
    const api = await svcApi();
    assert.equal(api.services.project.cli?.source, "workspace");
    assert.equal(api.services.project.state, "noCredentials");
    // The trees stay empty (their welcome shows) instead of minting credentials behind the user's back.
    assert.deepEqual(await api.services.jobs.getChildren(), []);
  });

  it("Continue Anonymously mints credentials against the configured cloud and the views become ready", async () => {
    const api = await svcApi();
    const prompts = new ScriptedPrompts();
    api.services.prompts = prompts;
    await vscode.commands.executeCommand("svc.continueAnonymously");
    assert.deepEqual(prompts.errors(), []);
    assert.equal(api.services.project.state, "ready");
    assert.deepEqual(api.services.project.trainerManifest, {
      status: "ok",
      trainer: { name: "quickstart-json-answers", datasets: ["data/train.jsonl", "data/eval.jsonl"], byteTokenLimit: 160 },
    });
    assert.equal(api.services.studio.current?.running, true);
  });
});
