/**
 * What the Endpoints tree shows, without VS Code (SPEC section 4's list row: slug, target summary,
 * auth mode, enabled badge; children are the keys, revoked ones marked).
 */
import type { AuthMode, Deployment, DeploymentKey } from "../../sdk/wire.js";
import { hostOf } from "../../ui-shared/format.js";
import { targetSummary } from "../../ui-shared/targetSummary.js";

export const AUTH_MODE_LABELS: Record<AuthMode, string> = {
  fixed_api_key: "API key",
  none: "No auth",
};

/** Row description beside the slug: `Final adapter (job 1234abcd) · API key · enabled`. */
export function endpointDescription(deployment: Deployment): string {
  return [targetSummary(deployment.target), deployment.authMode, deployment.enabled ? "enabled" : "disabled"].join(" · ");
}

export function endpointTooltip(deployment: Deployment): string {
  return [
    `${deployment.slug} (${hostOf(deployment.url)})`,
    `URL: ${deployment.url}`,
    `Target: ${targetSummary(deployment.target)}`,
    `Auth: ${AUTH_MODE_LABELS[deployment.authMode]} (${deployment.authMode})`,
    deployment.enabled ? "Enabled" : "Disabled: the URL answers 404",
  ].join("\n");
}

/** Drives which of Enable / Disable shows in the context menu. */
export function endpointContextValue(deployment: Pick<Deployment, "enabled">): string {
  return deployment.enabled ? "svc.endpoint.enabled" : "svc.endpoint.disabled";
}

export function keyDescription(key: DeploymentKey): string {
  return key.enabled ? `${key.prefix}…` : `${key.prefix}… · revoked`;
}

/** Only active keys can be revoked. */
export function keyContextValue(key: Pick<DeploymentKey, "enabled">): string {
  return key.enabled ? "svc.key.active" : "svc.key.revoked";
}

/** Active keys first, then revoked, each newest first: the ones a user acts on come first. */
export function sortKeys(keys: readonly DeploymentKey[]): DeploymentKey[] {
  return [...keys].sort((a, b) => Number(b.enabled) - Number(a.enabled) || b.createdAt.localeCompare(a.createdAt));
}
