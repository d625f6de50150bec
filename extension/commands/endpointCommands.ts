/** Create Endpoint, Open Endpoint, Enable/Disable, Set Auth Mode, Copy Endpoint URL. */
import * as vscode from "vscode";
import type { AuthMode, Deployment, DeploymentTarget } from "../../sdk/wire.js";
import { slugProblem } from "../../ui-shared/format.js";
import { shortJobId } from "../../ui-shared/targetSummary.js";
import { ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT } from "../../ui-shared/protocol/endpointDetail.js";
import { AUTH_MODE_LABELS } from "../core/endpointRows.js";
import { modelPickText } from "../core/modelPickItem.js";
import type { Services } from "../services.js";
import { deploymentFromArg, jobFromArg, pickDeployment } from "./args.js";

/** The endpoint the command is about: from its argument, else picked. Always fetched fresh, so toggles act on the current state. */
async function resolveDeployment(s: Services, arg: unknown, title: string): Promise<Deployment | undefined> {
  const given = deploymentFromArg(arg) ?? deploymentFromArg(await pickDeployment(s, title));
  if (!given) return undefined;
  return (await s.studio.endpoint()).api.getDeployment(given.id);
}

/** Reloads the tree and tells an open panel of this deployment to reload too. */
async function changed(s: Services, deploymentId: string): Promise<void> {
  s.endpointPanels.notify(deploymentId, ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT, { deploymentId });
  await s.endpoints.refresh();
}

interface TargetItem extends vscode.QuickPickItem {
  target: DeploymentTarget;
  suggestedSlug: string;
}

/** A slug suggestion the user edits: the job name plus a short id, lower-case with dashes. */
function suggestSlug(name: string, id: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return `${base || "endpoint"}-${id.slice(0, 4).toLowerCase()}`;
}

/**
 * Publishes a completed job's final adapter (or a base model) at its own URL: target, slug and
 * auth mode are asked in turn; the cloud's message is shown verbatim when it refuses (e.g. 409
 * slug taken). From a job's context menu the target is that job.
 */
export async function createEndpoint(s: Services, arg: unknown): Promise<Deployment | undefined> {
  const { api } = await s.studio.endpoint();
  let item: TargetItem | undefined;
  const fromJob = jobFromArg(arg);
  if (fromJob) {
    const job = fromJob.job ?? (await api.getJob(fromJob.id));
    item = { label: job.name, target: { kind: "adapter", jobId: job.id }, suggestedSlug: suggestSlug(job.name, job.id) };
  } else {
    await s.jobs.refresh();
    // Base models are optional targets: a cloud without them still lists the jobs.
    const models = await api.listModels().catch(() => []);
    const items: TargetItem[] = [
      ...s.jobs.current
        .filter((job) => job.status === "completed")
        .map((job) => ({
          label: `$(pass) ${job.name}`,
          description: `Final adapter (job ${shortJobId(job.id)})`,
          target: { kind: "adapter", jobId: job.id } as DeploymentTarget,
          suggestedSlug: suggestSlug(job.name, job.id),
        })),
      ...models.map((model) => ({
        ...modelPickText(model),
        target: { kind: "base_model", name: model.name } as DeploymentTarget,
        suggestedSlug: suggestSlug(model.name, Date.now().toString(36).slice(-4)),
      })),
    ];
    if (items.length === 0) {
      void s.prompts.info("Nothing to publish yet: train a job first.", {});
      return undefined;
    }
    item = await s.prompts.quickPick(items, { title: "Create Endpoint (1/3): what to serve" });
  }
  if (!item) return undefined;
  const slug = await s.prompts.inputBox({
    title: "Create Endpoint (2/3): slug",
    prompt: "The endpoint's URL is http://<slug>.<deploy domain>/v1",
    value: item.suggestedSlug,
    validateInput: (value) => slugProblem(value) ?? null,
    ignoreFocusOut: true,
  });
  if (slug === undefined) return undefined;
  const authMode = await pickAuthMode(s, "Create Endpoint (3/3): authentication", "fixed_api_key");
  if (!authMode) return undefined;
  const created = await api.createDeployment({ slug: slug.trim(), target: item.target, authMode });
  await s.endpoints.refresh();
  s.endpointPanels.show({ deploymentId: created.id, deployment: created });
  return created;
}

async function pickAuthMode(s: Services, title: string, current: AuthMode): Promise<AuthMode | undefined> {
  const modes: AuthMode[] = ["fixed_api_key", "none"];
  const picked = await s.prompts.quickPick(
    modes.map((mode) => ({
      label: AUTH_MODE_LABELS[mode],
      description: mode === current ? `${mode} (current)` : mode,
      detail: mode === "fixed_api_key" ? "Requests need Authorization: Bearer <key> with an active key." : "Anyone who knows the URL can call it.",
      mode,
    })),
    { title },
  );
  return picked?.mode;
}

export async function openEndpoint(s: Services, arg: unknown): Promise<void> {
  const target = deploymentFromArg(arg) ?? deploymentFromArg(await pickDeployment(s, "Open Endpoint"));
  if (target) s.endpointPanels.show({ deploymentId: target.id, deployment: target.deployment });
}

/**
 * Enables a disabled endpoint or disables an enabled one (a disabled URL answers 404; the slug
 * stays reserved). `enabled` forces a direction (the context menu's Enable / Disable items).
 */
export async function toggleEndpoint(s: Services, arg: unknown, enabled?: boolean): Promise<Deployment | undefined> {
  const deployment = await resolveDeployment(s, arg, "Enable or Disable Endpoint");
  if (!deployment) return undefined;
  const updated = await (await s.studio.endpoint()).api.updateDeployment(deployment.id, { enabled: enabled ?? !deployment.enabled });
  await changed(s, updated.id);
  void s.prompts.info(`Endpoint ${updated.slug} is now ${updated.enabled ? "enabled" : "disabled"}.`, {});
  return updated;
}

export async function setAuthMode(s: Services, arg: unknown): Promise<Deployment | undefined> {
  const deployment = await resolveDeployment(s, arg, "Set Auth Mode");
  if (!deployment) return undefined;
  const mode = await pickAuthMode(s, `Auth mode of ${deployment.slug}`, deployment.authMode);
  if (!mode || mode === deployment.authMode) return deployment;
  const updated = await (await s.studio.endpoint()).api.updateDeployment(deployment.id, { authMode: mode });
  await changed(s, updated.id);
  return updated;
}

/** Copies the endpoint URL (SDKs take it plus `/v1` as their base URL). */
export async function copyEndpointUrl(s: Services, arg: unknown): Promise<string | undefined> {
  const deployment = await resolveDeployment(s, arg, "Copy Endpoint URL");
  if (!deployment) return undefined;
  await vscode.env.clipboard.writeText(deployment.url);
  void s.prompts.info(`Copied ${deployment.url}`, {});
  return deployment.url;
}

export { changed as deploymentChanged };
