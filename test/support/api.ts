/** Small helpers for calling the real cloud over HTTP in tests. */
import { CloudClient } from "../../sdk/client.js";
import type { TestCloud } from "./cloud.js";

export interface Account {
  token: string;
  projectId: string;
  client: CloudClient;
}

/** A fresh anonymous user with one project. */
export async function newAccount(cloud: TestCloud): Promise<Account> {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "test" });
  return { token, projectId: project.id, client: new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id }) };
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
  const { readFileSync } = await import("node:fs");
  const path = await import("node:path");
  const { writeTinyModel } = await import("./modelFiles.js");
  const file = path.join(cloud.home, `${name}.gguf`);
  await writeTinyModel(file, { architecture: "llama", name });
  const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
  const res = await http(cloud, "POST", "/v1/models", { token, body: { name, path: file } });
  if (res.status !== 201) throw new Error(`model registration failed: ${res.text}`);
}
