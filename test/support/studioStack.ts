/**
 * A real studio against a real cloud for tests: a `svc cloud serve` process (optionally with one
 * training worker), a temp SVC_HOME, a copy of a project, and the studio server in this process.
 * The studio reads SVC_HOME / SVC_CLOUD_URL from the environment (and hands it to `svc start`),
 * so the stack sets them for its lifetime and restores them on stop.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { startTestCloud, type TestCloud } from "./cloud.js";
import { createStudioServer, type StudioServer } from "../../studio/index.js";
import type { Job } from "../../sdk/wire.js";
import { CloudClient } from "../../sdk/client.js";
import { pollUntil } from "./poll.js";
import { copyQuickstart, type QuickstartShape } from "./quickstart.js";
export { copyQuickstart } from "./quickstart.js";
import { createTempDir, type TempDir } from "./tmp.js";

export interface StudioStack {
  cloud: TestCloud;
  studio: StudioServer;
  projectDir: string;
  /** Scratch folder removed by stop(); SVC_HOME is `<tmp>/home`. */
  tmp: TempDir;
  /** Another studio on the same cloud and SVC_HOME, for a different project folder. */
  studioFor(projectDir: string): Promise<StudioServer>;
  stop(): Promise<void>;
}

/** Source of a project that builds but registers no trainer (manifest state "none"). */
export const NO_TRAINER_SOURCE = `import { createSvc } from "svc-studio";\nexport default createSvc({});\n`;
/** Source of a project whose build fails with a syntax error (manifest state "error"). */
export const BROKEN_SOURCE = `import { createSvc } from "svc-studio";\nexport default createSvc({ trainer: );\n`;

/** A project whose `src/svc/index.ts` is the given source (for the manifest's none / error states). */
export function writeProject(into: string, name: string, source: string): string {
  const dir = path.join(into, name);
  mkdirSync(path.join(dir, "src", "svc"), { recursive: true });
  writeFileSync(path.join(dir, "src", "svc", "index.ts"), source);
  return dir;
}

export async function startStudioStack(options: { workers?: number } & QuickstartShape = {}): Promise<StudioStack> {
  const tmp = await createTempDir("studio");
  const cloud = await startTestCloud({ workers: options.workers ?? 0 });
  const saved = { SVC_HOME: process.env.SVC_HOME, SVC_CLOUD_URL: process.env.SVC_CLOUD_URL };
  process.env.SVC_HOME = path.join(tmp.path, "home");
  process.env.SVC_CLOUD_URL = cloud.cloudUrl;
  const { workers: _workers, ...shape } = options;
  const projectDir = copyQuickstart(tmp.path, shape);
  const started: StudioServer[] = [];
  const studioFor = async (dir: string) => {
    const studio = await createStudioServer({ projectDir: dir, host: "127.0.0.1", port: 0 });
    started.push(studio);
    return studio;
  };
  const studio = await studioFor(projectDir);
  return {
    cloud,
    studio,
    projectDir,
    tmp,
    studioFor,
    async stop() {
      await Promise.all(started.map((s) => s.close()));
      await cloud.dispose();
      await tmp.remove();
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/**
 * One request with full control over the headers, Host included (fetch may not set Host), for the
 * guard tests. `token: null` sends no token.
 */
export function studioRequest(
  studio: StudioServer,
  method: string,
  pathAndQuery: string,
  options: { token?: string | null; host?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { host: options.host ?? `127.0.0.1:${studio.port}`, ...options.headers };
  const token = options.token === undefined ? studio.token : options.token;
  if (token !== null) headers["x-svc-studio-token"] = token;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port: studio.port, method, path: pathAndQuery, headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => {
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * Trains the studio's project as Run training does (`POST /api/train`, which answers when
 * `svc start` ends) and returns the job once it ended, asserting it completed.
 */
export async function trainThroughStudio(studio: StudioServer, timeoutMs = 120_000): Promise<Job> {
  const run = await studioRequest(studio, "POST", "/api/train");
  const id = /job (\S+) queued/.exec(run.text)?.[1];
  if (!id) throw new Error(`svc start printed no job id:\n${run.text}`);
  const job = await pollUntil(
    async () => {
      const current = (await studioRequest(studio, "GET", `/api/jobs/${id}`)).json as Job;
      return current.status === "queued" || current.status === "running" ? undefined : current;
    },
    { timeoutMs, description: `job ${id} to end` },
  );
  if (job.status !== "completed") throw new Error(`job ${id} ended ${job.status}: ${job.error}`);
  return job;
}

/** The cloud client of the studio's own anonymous user and project (for setup no UI does). */
export function projectClient(stack: Pick<StudioStack, "cloud" | "projectDir">): CloudClient {
  const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
  const { projectId } = JSON.parse(readFileSync(path.join(stack.projectDir, ".svc", "state.json"), "utf8"));
  return new CloudClient({ baseUrl: stack.cloud.cloudUrl, token, projectId });
}
