/**
 * Commands run from a tree item (its node is the argument), from a panel or a test (plain ids),
 * or from the command palette (no argument: the user picks). These turn any of those into ids,
 * asking with a quick pick only when nothing was given.
 */
import type { Deployment, DeploymentKey, Job } from "../../sdk/wire.js";
import { relativeTime } from "../../ui-shared/format.js";
import { targetSummary } from "../../ui-shared/targetSummary.js";
import type { Services } from "../services.js";

type Arg = unknown;
const field = (arg: Arg, name: string): unknown => (arg && typeof arg === "object" ? (arg as Record<string, unknown>)[name] : undefined);

/** `{kind:"job", job}` node, `{jobId}`, a Job, or the id itself. */
export function jobFromArg(arg: Arg): { id: string; job?: Job } | undefined {
  if (typeof arg === "string") return { id: arg };
  const job = field(arg, "job") as Job | undefined;
  if (job?.id) return { id: job.id, job };
  const jobId = field(arg, "jobId");
  if (typeof jobId === "string") return { id: jobId };
  const id = field(arg, "id");
  if (typeof id === "string" && typeof field(arg, "status") === "string") return { id, job: arg as Job };
  return undefined;
}

/** `{kind:"endpoint", deployment}` node, `{deploymentId}`, a Deployment, or the id itself. */
export function deploymentFromArg(arg: Arg): { id: string; deployment?: Deployment } | undefined {
  if (typeof arg === "string") return { id: arg };
  const deployment = field(arg, "deployment") as Deployment | undefined;
  if (deployment?.id) return { id: deployment.id, deployment };
  const deploymentId = field(arg, "deploymentId");
  if (typeof deploymentId === "string" && field(arg, "kind") !== "key") return { id: deploymentId };
  const id = field(arg, "id");
  if (typeof id === "string" && typeof field(arg, "slug") === "string") return { id, deployment: arg as Deployment };
  return undefined;
}

/** `{kind:"key", deploymentId, key}` node or `{deploymentId, keyId}`. */
export function keyFromArg(arg: Arg): { deploymentId: string; keyId: string; key?: DeploymentKey } | undefined {
  const deploymentId = field(arg, "deploymentId");
  if (typeof deploymentId !== "string") return undefined;
  const key = field(arg, "key") as DeploymentKey | undefined;
  if (key?.id) return { deploymentId, keyId: key.id, key };
  const keyId = field(arg, "keyId");
  return typeof keyId === "string" ? { deploymentId, keyId } : undefined;
}

export async function pickJob(s: Services, title: string, filter: (job: Job) => boolean = () => true): Promise<Job | undefined> {
  await s.jobs.refresh();
  const jobs = s.jobs.current.filter(filter);
  if (jobs.length === 0) {
    void s.prompts.info("No matching jobs.", {});
    return undefined;
  }
  const picked = await s.prompts.quickPick(
    jobs.map((job) => ({ label: job.name, description: `${job.status} · ${relativeTime(job.createdAt)}`, detail: job.id, job })),
    { title, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.job;
}

export async function pickDeployment(s: Services, title: string): Promise<Deployment | undefined> {
  await s.endpoints.refresh();
  const deployments = s.endpoints.current;
  if (deployments.length === 0) {
    void s.prompts.info("No endpoints yet: create one with “svc: Create Endpoint”.", {});
    return undefined;
  }
  const picked = await s.prompts.quickPick(
    deployments.map((deployment) => ({
      label: deployment.slug,
      description: `${targetSummary(deployment.target)} · ${deployment.enabled ? "enabled" : "disabled"}`,
      deployment,
    })),
    { title },
  );
  return picked?.deployment;
}
