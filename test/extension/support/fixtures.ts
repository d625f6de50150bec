/**
 * What several suites need, made on first use in this extension host: credentials (Continue
 * Anonymously), a completed job (a real Run Training), an endpoint on it and an active key. Each is looked up first, so in the normal order the
 * one a suite's own test created is reused; a suite run alone (SVC_EXTENSION_TEST_GREP) makes its
 * own. No test depends on another having run.
 */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { TrainingOutcome } from "../../../extension/core/trainingOutput.js";
import type { Deployment, DeploymentKey, Job } from "../../../sdk/wire.js";
import { svcApi } from "./extension.js";
import { pickContaining, ScriptedPrompts } from "./scriptedPrompts.js";

/** The endpoint the endpoints suite creates and the others reuse. */
export const SLUG = `ext-test-${Date.now().toString(36)}`;

/** Runs `use` with its own scripted prompts, restoring the test's afterwards. */
async function withPrompts<T>(script: (prompts: ScriptedPrompts) => void, use: () => Thenable<T>): Promise<T> {
  const { services } = await svcApi();
  const saved = services.prompts;
  const prompts = new ScriptedPrompts();
  script(prompts);
  services.prompts = prompts;
  try {
    return await use();
  } finally {
    services.prompts = saved;
  }
}

/** The state the activation suite ends in: credentials minted, the views ready. */
export async function signedIn(): Promise<void> {
  const { services } = await svcApi();
  if (services.project.state === "ready") return;
  await withPrompts(
    () => undefined,
    () => vscode.commands.executeCommand("svc.continueAnonymously"),
  );
  assert.equal(services.project.state, "ready", "the fixture's sign-in");
}

export async function completedJob(): Promise<Job> {
  await signedIn();
  const { services } = await svcApi();
  await services.jobs.refresh();
  const existing = services.jobs.current.find((job) => job.status === "completed");
  if (existing) return existing;
  const outcome = await withPrompts(
    () => undefined,
    () => vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining"),
  );
  assert.equal(outcome?.finalStatus, "completed", "the fixture's training run");
  await services.jobs.refresh();
  return services.jobs.current.find((job) => job.id === outcome.jobId)!;
}

export async function testEndpoint(): Promise<Deployment> {
  const { services } = await svcApi();
  await services.endpoints.refresh();
  const existing = services.endpoints.current.find((d) => d.slug === SLUG);
  if (existing) return existing;
  const job = await completedJob();
  const created = await withPrompts(
    (prompts) => prompts.answerPicks(pickContaining("fixed_api_key")).answerInputs(SLUG),
    () => vscode.commands.executeCommand<Deployment>("svc.createEndpoint", { kind: "job", job }),
  );
  assert.equal(created?.slug, SLUG, "the fixture endpoint");
  await services.endpoints.refresh();
  return created;
}

export async function activeKey(deployment: Deployment): Promise<DeploymentKey> {
  const { services } = await svcApi();
  const existing = (await services.endpoints.keysOf(deployment.id)).find((key) => key.enabled);
  if (existing) return existing;
  const issued = await withPrompts(
    // No rules (Never, blank limits and budget); the plaintext modal, dismissed.
    (prompts) => prompts.answerInputs("fixture key", "", "", "").answerPicks(pickContaining("Never")).answerMessages(undefined),
    () => vscode.commands.executeCommand<DeploymentKey>("svc.issueKey", deployment.id),
  );
  assert.ok(issued, "the fixture key");
  return issued;
}
