/**
 * Issue Key and Revoke Key. The plaintext of an issued key is shown once, in a modal with a Copy
 * action, and then dropped: it is never written to the Output channel, to state, or to any log,
 * and the command's return value carries only the key's metadata.
 */
import * as vscode from "vscode";
import type { DeploymentKey } from "../../sdk/wire.js";
import { keyLabelProblem } from "../../ui-shared/format.js";
import type { Services } from "../services.js";
import { deploymentFromArg, keyFromArg, pickDeployment } from "./args.js";
import { deploymentChanged } from "./endpointCommands.js";

export async function issueKey(s: Services, arg: unknown): Promise<DeploymentKey | undefined> {
  const target = deploymentFromArg(arg) ?? deploymentFromArg(await pickDeployment(s, "Issue Key"));
  if (!target) return undefined;
  const { api } = await s.studio.endpoint();
  const deployment = target.deployment ?? (await api.getDeployment(target.id));
  const label = await s.prompts.inputBox({
    title: `Issue Key for ${deployment.slug}`,
    prompt: "A label to recognise the key by (1 to 80 characters)",
    placeHolder: "e.g. staging server",
    validateInput: (value) => keyLabelProblem(value) ?? null,
    ignoreFocusOut: true,
  });
  if (label === undefined) return undefined;
  const { key: plaintext, ...metadata } = await api.issueKey(deployment.id, label.trim());
  await deploymentChanged(s, deployment.id);
  s.endpointPanels.remount(deployment.id);
  const choice = await s.prompts.info(
    `API key “${metadata.label}” issued for ${deployment.slug}`,
    { modal: true, detail: `${plaintext}\n\nCopy it now: it is shown only this once.` },
    "Copy",
  );
  if (choice === "Copy") await vscode.env.clipboard.writeText(plaintext);
  return metadata;
}

export async function revokeKey(s: Services, arg: unknown): Promise<boolean> {
  const { api } = await s.studio.endpoint();
  let target = keyFromArg(arg);
  if (!target) {
    const deployment = await pickDeployment(s, "Revoke Key: endpoint");
    if (!deployment) return false;
    const keys = (await s.endpoints.keysOf(deployment.id)).filter((key) => key.enabled);
    if (keys.length === 0) {
      void s.prompts.info(`${deployment.slug} has no active keys.`, {});
      return false;
    }
    const picked = await s.prompts.quickPick(
      keys.map((key) => ({ label: key.label, description: `${key.prefix}…`, key })),
      { title: `Revoke Key of ${deployment.slug}` },
    );
    if (!picked) return false;
    target = { deploymentId: deployment.id, keyId: picked.key.id, key: picked.key };
  }
  const name = target.key ? `“${target.key.label}” (${target.key.prefix}…)` : target.keyId;
  const answer = await s.prompts.warning(
    `Revoke API key ${name}?`,
    { modal: true, detail: "Requests using it are rejected within about a second. This cannot be undone." },
    "Revoke",
  );
  if (answer !== "Revoke") return false;
  await api.revokeKey(target.deploymentId, target.keyId);
  await deploymentChanged(s, target.deploymentId);
  s.endpointPanels.remount(target.deploymentId);
  return true;
}
