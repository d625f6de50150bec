/** Small helpers for calling the real cloud over HTTP in tests. */
import type { CreateJobInput } from "../../sdk/api/jobs.js";
import { CloudClient } from "../../sdk/client.js";
import { writeCredentials } from "../../sdk/credentials.js";
import { writeProjectState } from "../../sdk/state.js";
import type { Job, JobEvent, Project } from "../../sdk/wire.js";
import { workerToken, type TestCloud } from "./cloud.js";
import { quickstartData } from "./quickstart.js";

export interface Account {
  token: string;
  projectId: string;
  project: Project;
  /** A client of the new user, scoped to the project. */
  client: CloudClient;
}

/** A fresh anonymous user with one project. */
export async function newAccount(cloud: Pick<TestCloud, "cloudUrl">, name = "test"): Promise<Account> {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name });
  return { token, projectId: project.id, project, client: new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id }) };
}

/**
 * A new account signed in the way `svc init` leaves a machine: credentials in SVC_HOME (read from
 * the environment, like every svc process), and `.svc/state.json` in `projectDir` naming the project.
 */
export async function signInWithNewProject(cloudUrl: string, projectDir: string, name = "test"): Promise<Account> {
  const account = await newAccount({ cloudUrl }, name);
  await writeCredentials({ kind: "anonymous", cloudUrl, token: account.token });
  await writeProjectState(projectDir, { orgSlug: account.project.orgSlug, projectSlug: account.project.slug, projectId: account.projectId });
  return account;
}

export async function http(
  cloud: TestCloud,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  } else if (options.raw !== undefined) {
    body = options.raw;
  }
  const response = await fetch(cloud.cloudUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/** Registers a small real GGUF (llama-shaped, so trainable) as a base model through the real admin route. */
export async function registerTestModel(cloud: TestCloud, name: string): Promise<void> {
  const path = await import("node:path");
  const { writeTinyModel } = await import("./modelFiles.js");
  const file = path.join(cloud.home, `${name}.gguf`);
  await writeTinyModel(file, { architecture: "llama", name });
  const res = await http(cloud, "POST", "/v1/models", { token: workerToken(cloud), body: { name, path: file } });
  if (res.status !== 201) throw new Error(`model registration failed: ${res.text}`);
}

/** The quickstart's data uploaded as the project's datasets: the train set, and the eval set unless `withEval` is false. */
export async function uploadQuickstartData(client: CloudClient, withEval = true): Promise<{ datasetId: string; evalDatasetId?: string }> {
  const train = await client.uploadDataset("train.jsonl", quickstartData("train.jsonl"));
  if (!withEval) return { datasetId: train.id };
  const evalSet = await client.uploadDataset("eval.jsonl", quickstartData("eval.jsonl"));
  return { datasetId: train.id, evalDatasetId: evalSet.id };
}

/**
 * Creates a job and reads its events until the stream ends with the job (no polling), failing
 * unless it completed; `log` adds what a worker printed to that failure.
 */
export async function trainToEnd(client: CloudClient, request: CreateJobInput, log?: () => string): Promise<{ job: Job; events: JobEvent[] }> {
  const created = await client.createJob(request);
  const events: JobEvent[] = [];
  for await (const event of client.jobEvents(created.id)) events.push(event);
  const job = await client.getJob(created.id);
  if (job.status !== "completed") throw new Error(`job ${request.name} ended ${job.status}: ${job.error ?? ""}\n${log?.() ?? ""}`);
  return { job, events };
}
