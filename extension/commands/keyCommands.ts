/**
 * Issue Key and Revoke Key. The plaintext of an issued key is shown once, in a modal with a Copy
 * action, and then dropped: it is never written to the Output channel, to state, or to any log,
 * and the command's return value carries only the key's metadata.
 */
import * as vscode from "vscode";
import type { DeploymentKey, KeyBudget, KeyRules } from "../../sdk/wire.js";
import { keyLabelProblem } from "../../ui-shared/format.js";
import { EXPIRY_CHOICES, ruleFieldProblem, rulesFromForm } from "../../ui-shared/keyRules.js";
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
  const rules = await askRules(s, `Issue Key for ${deployment.slug}`);
  if (rules === undefined) return undefined;
  const { key: plaintext, ...metadata } = await api.issueKey(deployment.id, label.trim(), rules);
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

const BUDGET_PERIODS: readonly { label: string; period: KeyBudget["period"] }[] = [
  { label: "Per month", period: "month" },
  { label: "Per day", period: "day" },
  { label: "In all", period: "total" },
];

/** The new key's rules, one quick input each as the studio's key form asks them (blank: no rule); undefined: dismissed. */
async function askRules(s: Services, title: string): Promise<KeyRules | undefined> {
  const expiry = await s.prompts.quickPick(
    EXPIRY_CHOICES.map((choice) => ({ label: choice.label, ms: choice.ms })),
    { title: `${title}: expiry`, placeHolder: "When the key stops working", ignoreFocusOut: true },
  );
  if (!expiry) return undefined;
  const whole = (rule: string, prompt: string, placeHolder: string) =>
    s.prompts.inputBox({ title: `${title}: ${rule}`, prompt, placeHolder, validateInput: (value) => ruleFieldProblem(value) ?? null, ignoreFocusOut: true });
  const requestsPerMinute = await whole("requests per minute", "Requests per minute (blank: no limit)", "e.g. 30");
  if (requestsPerMinute === undefined) return undefined;
  const tokensPerMinute = await whole("tokens per minute", "Tokens per minute (blank: no limit)", "e.g. 10000");
  if (tokensPerMinute === undefined) return undefined;
  const budgetTokens = await whole("token budget", "Token budget (blank: none)", "e.g. 1000000");
  if (budgetTokens === undefined) return undefined;
  let budgetPeriod: KeyBudget["period"] = "month";
  if (budgetTokens.trim() !== "") {
    const picked = await s.prompts.quickPick(BUDGET_PERIODS, { title: `${title}: the budget of ${budgetTokens.trim()} tokens renews`, ignoreFocusOut: true });
    if (!picked) return undefined;
    budgetPeriod = picked.period;
  }
  return rulesFromForm({ expiryMs: expiry.ms, requestsPerMinute, tokensPerMinute, budgetTokens, budgetPeriod }, Date.now());
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
