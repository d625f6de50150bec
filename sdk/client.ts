/**
 * CloudClient: one method per route of the cloud API (DESIGN.md section 6), derived from the
 * contract (`sdk/api/`): each JSON route of `cloudApi` is a method named by its key, taking its
 * declared arguments and returning its declared answer. Streams and uploads are written below.
 *
 * @example
 * const client = new CloudClient({ baseUrl: "http://127.0.0.1:7870", token, projectId });
 * const deployment = await client.createDeployment({ slug: "my-bot", target: { kind: "base_model", name: "svc-tiny" } });
 * const { key } = await client.createDeploymentKey(deployment.id, { label: "teammate" });
 */
import { ApiError, ConnectionError } from "./errors.js";
import { readEventStream } from "./eventStreamReader.js";
import { accountsApi, anonymousTokenRoute } from "./api/accounts.js";
import { uploadDatasetRoute } from "./api/datasets.js";
import { deploymentsApi } from "./api/deployments.js";
import { inferenceChatRoute, type InferenceChatInput } from "./api/inference.js";
import { jobAdapterRoute, jobBaseModelRoute, jobEventsRoute, jobsApi, type AdapterChoice } from "./api/jobs.js";
import { keysApi } from "./api/keys.js";
import { modelsApi } from "./api/models.js";
import { workersApi } from "./api/workers.js";
import { installRouteMethods, pathOf, type AnyRoute, type CallParts, type ResponseOf, type RouteMethods } from "./api/route.js";
import type { Dataset, JobEvent, JobEventType } from "./wire.js";

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

export type { CreateJobInput, InferenceChatInput } from "./wire.js";

export interface EventStreamOptions {
  /** Resume after this seq (0 = from the start). */
  lastEventId?: number;
  signal?: AbortSignal;
  /** Reconnect attempts in a row without receiving anything before giving up. */
  maxRetries?: number;
}

type Query = Record<string, string | number | undefined>;

/** The cloud's JSON routes, one method each (its streams and uploads are written out below). */
const cloudApi = { ...accountsApi, ...jobsApi, ...deploymentsApi, ...keysApi, ...modelsApi, ...workersApi };

/** The derived methods (`listJobs`, `getJob`, `createDeployment`, ...), installed at the end of this file. */
export interface CloudClient extends RouteMethods<typeof cloudApi> {}

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

  /** Mints an anonymous user and returns its bearer token (no auth needed). */
  static async createAnonymousToken(baseUrl: string): Promise<{ token: string; userId: string }> {
    return new CloudClient({ baseUrl }).call(anonymousTokenRoute, {}, { auth: false });
  }

  /**
   * The job list as the cloud's raw response (a JSON array of jobs, newest first, with an ETag),
   * for relays that pass the bytes on without parsing megabytes of jobs (the studio's
   * `/api/jobs`). With the ETag of a list the caller kept, an unchanged list answers 304 and no body.
   */
  openJobList(ifNoneMatch?: string): Promise<Response> {
    return this.open(jobsApi.listJobs, {}, { headers: ifNoneMatch ? { "if-none-match": ifNoneMatch } : {}, notModified: true });
  }

  /** The `authorization` header this client sends now (none without a token), for requests made outside fetch. */
  async authorization(): Promise<Record<string, string>> {
    const token = await this.currentToken();
    return token ? { authorization: `Bearer ${token}` } : {};
  }

  private async currentToken(): Promise<string | undefined> {
    const token = this.options.token;
    return typeof token === "function" ? token() : token;
  }

  /**
   * The job's events until the job ends, resuming after a dropped connection with `Last-Event-ID`
   * (sdk/eventStreamReader.ts), so each event is seen exactly once, in order.
   */
  async *jobEvents(jobId: string, options: EventStreamOptions = {}): AsyncGenerator<JobEvent> {
    let cursor = options.lastEventId ?? 0;
    const messages = readEventStream((lastEventId, signal) => this.openJobEventStream(jobId, Number(lastEventId ?? 0), signal), {
      signal: options.signal,
      lastEventId: cursor > 0 ? String(cursor) : undefined,
      maxRetries: options.maxRetries ?? 8,
      retryDelayMs: (failures) => Math.min(250 * 2 ** failures, 5000),
    });
    for await (const message of messages) {
      const seq = Number(message.id);
      if (!Number.isFinite(seq) || seq <= cursor) continue; // never yield a duplicate
      cursor = seq;
      yield { seq, type: message.event as JobEventType, data: JSON.parse(message.data), createdAt: "" };
    }
  }
  /**
   * Opens the raw SSE response (for relays that pass the stream through unchanged). `batch` asks
   * for backlogs as `batch` frames (one frame carrying many events; see cloud/routes/jobEvents.ts).
   */
  openJobEventStream(jobId: string, lastEventId: number, signal?: AbortSignal, { batch = false }: { batch?: boolean } = {}): Promise<Response> {
    return this.open(
      jobEventsRoute,
      { params: { id: jobId } },
      {
        query: batch ? { batch: "1" } : {},
        headers: { accept: "text/event-stream", ...(lastEventId > 0 ? { "last-event-id": String(lastEventId) } : {}) },
        signal,
        stream: true,
      },
    );
  }

  uploadDataset(name: string, jsonl: string | Uint8Array): Promise<Dataset> {
    return this.call(uploadDatasetRoute, {}, { query: { name }, rawBody: jsonl, headers: { "content-type": "application/jsonl" } });
  }

  /**
   * Chat with a completed job's adapter, a checkpoint, or a base model (`POST /v1/inference/chat`).
   * Returns the raw response: JSON for `stream: false`, OpenAI-style SSE chunks for `stream: true`.
   */
  openInferenceChat(body: InferenceChatInput, signal?: AbortSignal): Promise<Response> {
    return this.open(inferenceChatRoute, { body }, { headers: body.stream ? { accept: "text/event-stream" } : {}, signal, stream: Boolean(body.stream) });
  }

  /**
   * A job's adapter as a file (`GET /v1/jobs/:id/adapter`): the GGUF, or PEFT's pair as a zip; the
   * final adapter, or a checkpoint's with `step`. Returns the raw response, its body unread (no
   * overall timeout: it is a download), named by its Content-Disposition (`fileNameOf` in sdk/api/files.ts).
   */
  openJobAdapter(jobId: string, choice: AdapterChoice, signal?: AbortSignal): Promise<Response> {
    return this.open(jobAdapterRoute, { params: { id: jobId } }, { query: { ...choice }, signal, stream: true });
  }

  /** The GGUF of the base model a job trained on (`GET /v1/jobs/:id/base-model`), its body unread, like `openJobAdapter`. */
  openJobBaseModel(jobId: string, signal?: AbortSignal): Promise<Response> {
    return this.open(jobBaseModelRoute, { params: { id: jobId } }, { signal, stream: true });
  }

  // --- plumbing -----------------------------------------------------------------------------
  /** Sends one call of a contract route and parses its JSON answer (undefined for 204). */
  async call<R extends AnyRoute>(route: R, parts: CallParts, init: RequestInit_ = {}): Promise<ResponseOf<R>> {
    const response = await this.open(route, parts, init);
    return response.status === 204 ? undefined : response.json();
  }

  /** Sends one call of a contract route, adding the client's project where the route takes it. */
  private open(route: AnyRoute, { params, body }: CallParts, init: RequestInit_ = {}): Promise<Response> {
    const scope = route.project?.endsWith("?") ? this.optionalScope() : route.project ? this.scope() : {};
    const query = route.project?.startsWith("query") ? { ...scope, ...init.query } : init.query;
    if (body !== undefined && route.project?.startsWith("body")) body = { ...body, ...scope };
    return this.send(route.method, pathOf(route.path, params), { ...init, query, body });
  }

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
    const url = withQuery(this.baseUrl + path, init.query);
    const headers: Record<string, string> = { ...init.headers };
    let token: string | undefined;
    if (init.auth !== false) token = (await this.currentToken()) || undefined;
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.body);
    } else if (init.rawBody !== undefined) {
      body = init.rawBody as BodyInit;
    }
    const signal = init.stream ? init.signal : deadline(init.signal, this.options.timeoutMs ?? 60_000);
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

/** `url` with the query's defined values appended (a string: cheaper than URL + searchParams per call). */
function withQuery(url: string, query: Query | undefined): string {
  let search = "";
  for (const key in query) {
    const value = query[key];
    if (value !== undefined) search += `${search ? "&" : "?"}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  }
  return url + search;
}

/** A call's deadline, joined with the caller's own signal only when there is one. */
function deadline(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = AbortSignal.timeout(ms);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

installRouteMethods(CloudClient.prototype, cloudApi, (client, route, parts) => client.call(route, parts));
