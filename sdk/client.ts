/**
 * CloudClient: one method per route of the cloud API (DESIGN.md section 6).
 *
 * @example
 * const client = new CloudClient({ baseUrl: "http://127.0.0.1:7870", token, projectId });
 * const deployment = await client.createDeployment({ slug: "my-bot", target: { kind: "base_model", name: "svc-tiny" } });
 * const { key } = await client.createDeploymentKey(deployment.id, { label: "teammate" });
 */
import { ApiError, ConnectionError } from "./errors.js";
import { readJobEvents, type EventStreamOptions } from "./sse.js";
import type {
  Artifact, BaseModel, CreateDeploymentInput, CreatedDeploymentKey, Dataset, Deployment, DeploymentKey, Job, JobEvent, Me, Project,
  UpdateDeploymentInput,
} from "./wire.js";

export interface CloudClientOptions {
  /** Control-plane URL, e.g. `http://127.0.0.1:7870`. */
  baseUrl: string;
  /** Bearer token, or a function that returns the current one (OAuth refresh). */
  token?: string | (() => Promise<string>);
  /** Called once after a 401 with the token the server refused; returns a fresh token to retry with, or null. */
  refreshToken?: (rejected: string) => Promise<string | null>;
  /** Default project for project-scoped calls. */
  projectId?: string;
  /** Per-request timeout for non-streaming calls (ms). */
  timeoutMs?: number;
}

export interface CreateJobInput {
  name: string;
  config: Record<string, unknown>;
  datasetId?: string;
  evalDatasetId?: string;
}

type Query = Record<string, string | number | undefined>;

export interface InferenceChatInput {
  target: import("./wire.js").DeploymentTarget;
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string | string[];
  seed?: number;
  [extra: string]: unknown;
}

export class CloudClient {
  readonly baseUrl: string;
  readonly projectId: string | undefined;

  constructor(private readonly options: CloudClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.projectId = options.projectId;
  }

  /** A client for another project with the same credentials. */
  withProject(projectId: string): CloudClient {
    return new CloudClient({ ...this.options, projectId });
  }

  // --- accounts -----------------------------------------------------------------------------
  /** Mints an anonymous user and returns its bearer token (no auth needed). */
  static async createAnonymousToken(baseUrl: string): Promise<{ token: string; userId: string }> {
    return new CloudClient({ baseUrl }).request("POST", "/v1/auth/anonymous", { auth: false });
  }
  me(): Promise<Me> {
    return this.request("GET", "/v1/me");
  }
  listProjects(): Promise<Project[]> {
    return this.request("GET", "/v1/projects");
  }
  createProject(input: { name: string; orgId?: string }): Promise<Project> {
    return this.request("POST", "/v1/projects", { body: input });
  }

  // --- jobs ---------------------------------------------------------------------------------
  listJobs(): Promise<Job[]> {
    return this.request("GET", "/v1/jobs", { query: this.scope() });
  }
  /**
   * The job list as the cloud's raw response (a JSON array of jobs, newest first, with an ETag),
   * for relays that pass the bytes on without parsing megabytes of jobs (the studio's
   * `/api/jobs`). With the ETag of a list the caller kept, an unchanged list answers 304 and no body.
   */
  openJobList(ifNoneMatch?: string): Promise<Response> {
    return this.send("GET", "/v1/jobs", { query: this.scope(), headers: ifNoneMatch ? { "if-none-match": ifNoneMatch } : {}, notModified: true });
  }
  getJob(jobId: string): Promise<Job> {
    return this.request("GET", `/v1/jobs/${enc(jobId)}`, { query: this.optionalScope() });
  }
  createJob(input: CreateJobInput): Promise<Job> {
    return this.request("POST", "/v1/jobs", { body: { ...input, projectId: this.scope().projectId } });
  }
  cancelJob(jobId: string): Promise<Job> {
    return this.request("POST", `/v1/jobs/${enc(jobId)}/cancel`, { query: this.optionalScope() });
  }
  listArtifacts(jobId: string): Promise<Artifact[]> {
    return this.request("GET", `/v1/jobs/${enc(jobId)}/artifacts`, { query: this.optionalScope() });
  }
  /** The job's events, resuming automatically after a dropped connection, until the job ends. */
  jobEvents(jobId: string, options: EventStreamOptions = {}): AsyncGenerator<JobEvent> {
    return readJobEvents(async (lastEventId, signal) => {
      const response = await this.send("GET", `/v1/jobs/${enc(jobId)}/events`, {
        query: this.optionalScope(),
        headers: { accept: "text/event-stream", ...(lastEventId > 0 ? { "last-event-id": String(lastEventId) } : {}) },
        signal,
        stream: true,
      });
      return response;
    }, options);
  }
  /**
   * Opens the raw SSE response (for relays that pass the stream through unchanged). `batch` asks
   * for backlogs as `batch` frames (one frame carrying many events; see cloud/routes/jobEvents.ts).
   */
  openJobEventStream(jobId: string, lastEventId: number, signal?: AbortSignal, { batch = false }: { batch?: boolean } = {}): Promise<Response> {
    return this.send("GET", `/v1/jobs/${enc(jobId)}/events`, {
      query: { ...this.optionalScope(), ...(batch ? { batch: "1" } : {}) },
      headers: { accept: "text/event-stream", ...(lastEventId > 0 ? { "last-event-id": String(lastEventId) } : {}) },
      signal,
      stream: true,
    });
  }

  // --- datasets and models ------------------------------------------------------------------
  uploadDataset(name: string, jsonl: string | Uint8Array): Promise<Dataset> {
    return this.request("POST", "/v1/datasets", {
      query: { ...this.scope(), name },
      rawBody: jsonl,
      headers: { "content-type": "application/jsonl" },
    });
  }
  listModels(): Promise<BaseModel[]> {
    return this.request("GET", "/v1/models");
  }

  // --- inference ----------------------------------------------------------------------------
  /**
   * Chat with a completed job's adapter, a checkpoint, or a base model (`POST /v1/inference/chat`).
   * Returns the raw response: JSON for `stream: false`, OpenAI-style SSE chunks for `stream: true`.
   */
  openInferenceChat(body: InferenceChatInput, signal?: AbortSignal): Promise<Response> {
    return this.send("POST", "/v1/inference/chat", {
      body: { ...body, ...(this.projectId ? { projectId: this.projectId } : {}) },
      headers: body.stream ? { accept: "text/event-stream" } : {},
      signal,
      stream: Boolean(body.stream),
    });
  }

  // --- deployments --------------------------------------------------------------------------
  listDeployments(): Promise<Deployment[]> {
    return this.request("GET", "/v1/deployments", { query: this.scope() });
  }
  getDeployment(id: string): Promise<Deployment> {
    return this.request("GET", `/v1/deployments/${enc(id)}`, { query: this.optionalScope() });
  }
  createDeployment(input: CreateDeploymentInput): Promise<Deployment> {
    return this.request("POST", "/v1/deployments", { body: { ...input, projectId: this.scope().projectId } });
  }
  /** Partial update: only the given fields change (including `target`). */
  updateDeployment(id: string, patch: UpdateDeploymentInput): Promise<Deployment> {
    return this.request("PATCH", `/v1/deployments/${enc(id)}`, { query: this.optionalScope(), body: patch });
  }
  async deleteDeployment(id: string): Promise<void> {
    await this.request("DELETE", `/v1/deployments/${enc(id)}`, { query: this.optionalScope() });
  }
  listDeploymentKeys(deploymentId: string): Promise<DeploymentKey[]> {
    return this.request("GET", `/v1/deployments/${enc(deploymentId)}/keys`, { query: this.optionalScope() });
  }
  /** The response's `key` is the plaintext: shown once, never returned again. */
  createDeploymentKey(deploymentId: string, input: { label: string }): Promise<CreatedDeploymentKey> {
    return this.request("POST", `/v1/deployments/${enc(deploymentId)}/keys`, { query: this.optionalScope(), body: input });
  }
  async revokeDeploymentKey(deploymentId: string, keyId: string): Promise<void> {
    await this.request("DELETE", `/v1/deployments/${enc(deploymentId)}/keys/${enc(keyId)}`, { query: this.optionalScope() });
  }

  // --- plumbing -----------------------------------------------------------------------------
  private scope(): { projectId: string } {
    if (!this.projectId) throw new Error("this call needs a project: create the client with projectId");
    return { projectId: this.projectId };
  }
  private optionalScope(): Query {
    return this.projectId ? { projectId: this.projectId } : {};
  }

  /** Sends a request and parses the JSON answer (undefined for 204). */
  async request<T>(method: string, path: string, init: RequestInit_ = {}): Promise<T> {
    const response = await this.send(method, path, init);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  private async send(method: string, path: string, init: RequestInit_, retried = false): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...init.headers };
    let token: string | undefined;
    if (init.auth !== false && this.options.token) {
      token = typeof this.options.token === "function" ? await this.options.token() : this.options.token;
      headers.authorization = `Bearer ${token}`;
    }
    let body: BodyInit | undefined;
    if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.body);
    } else if (init.rawBody !== undefined) {
      body = init.rawBody as BodyInit;
    }
    const signal = init.stream ? init.signal : anySignal(init.signal, AbortSignal.timeout(this.options.timeoutMs ?? 60_000));
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body, signal });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      throw new ConnectionError(this.baseUrl, err);
    }
    if (response.status === 401 && !retried && token !== undefined && this.options.refreshToken) {
      await response.body?.cancel();
      const fresh = await this.options.refreshToken(token);
      if (fresh) return this.send(method, path, init, true);
    }
    if (!response.ok && !(init.notModified && response.status === 304)) {
      const text = await response.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the status text as the message
      }
      throw ApiError.from(response.status, parsed, `${method} ${path} failed with HTTP ${response.status}`);
    }
    return response;
  }
}

interface RequestInit_ {
  query?: Query;
  body?: unknown;
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  auth?: boolean;
  /** Streaming responses get no overall timeout. */
  stream?: boolean;
  /** A conditional request: 304 Not Modified is an answer, not an error. */
  notModified?: boolean;
}

const enc = encodeURIComponent;

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}
