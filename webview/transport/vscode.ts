/**
 * VS Code transport (STYLE.md 2-4): the same `Transport` the SPA uses, carried over postMessage to
 * the extension host using the envelope of `ui-shared/protocol/common.ts`.
 * `acquireVsCodeApi()` may be called only once per webview, so this module owns the one call.
 */
import { installRouteMethods, type RouteMethods } from "../../sdk/api/route.js";
import { studioApi, type StudioApi } from "../../sdk/api/studio.js";
import {
  READY_COMMAND,
  REQUEST_TIMEOUT_MS,
  STREAM_CLOSE_COMMAND,
  STREAM_DATA,
  STREAM_END,
  STREAM_INTERRUPTED,
  type ApiMethod,
  type ApiRequests,
  type HostToViewMessage,
  type NotificationMessage,
  type StreamData,
  type StreamDataParams,
  type StreamEndParams,
  type StreamInterruptedParams,
  type StreamSpec,
  type ViewToHostMessage,
  apiParams,
} from "../../ui-shared/protocol/common.js";
import {
  TransportError,
  type ChatRequest,
  type ChatUsage,
  type DownloadRequest,
  type JobEventHandlers,
  type SaveFileRequest,
  type SavedDownload,
  type Transport,
  type Unsubscribe,
} from "../../ui-shared/transport.js";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

let vscodeApi: VsCodeApi | undefined;
/** The single `acquireVsCodeApi()` call of this webview. */
export function getVsCodeApi(): VsCodeApi {
  vscodeApi ??= acquireVsCodeApi();
  return vscodeApi;
}

interface PendingRequest {
  resolve(result: unknown): void;
  reject(error: TransportError): void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface StreamListener {
  onData(data: StreamData): void;
  onInterrupt(): void;
  onEnd(error?: TransportError): void;
}

type NotificationHandler = (params: unknown) => void;

/** The JSON routes' methods (`listJobs`, `getJob`, ...): `api/<name>` requests, installed at the end of this file. */
export interface VsCodeTransport extends RouteMethods<StudioApi> {}

export class VsCodeTransport implements Transport {
  private nextId = 1;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly streams = new Map<string, StreamListener>();
  private readonly notificationHandlers = new Map<string, Set<NotificationHandler>>();

  constructor(
    private readonly api: Pick<VsCodeApi, "postMessage"> = getVsCodeApi(),
    target: Pick<Window, "addEventListener"> = window,
    private readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {
    target.addEventListener("message", (event: Event) => this.receive((event as MessageEvent).data as HostToViewMessage));
  }

  /** Tells the host the view listens; the host answers with the view's initial state notification. */
  ready(): void {
    this.post({ kind: "command", method: READY_COMMAND, params: {} });
  }

  /** Subscribes to a host notification (e.g. `jobDetail/state/didChange`). */
  onNotification<P>(method: string, handler: (params: P) => void): Unsubscribe {
    let set = this.notificationHandlers.get(method);
    if (!set) this.notificationHandlers.set(method, (set = new Set()));
    const wrapped = handler as NotificationHandler;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  command(method: string, params: unknown): void {
    this.post({ kind: "command", method, params });
  }

  /** `waitForUser`: the answer waits on the user (a save dialog), so no timeout applies. */
  request<M extends ApiMethod>(
    method: M,
    params: ApiRequests[M]["params"],
    { waitForUser = false }: { waitForUser?: boolean } = {},
  ): Promise<ApiRequests[M]["result"]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = waitForUser
        ? undefined
        : setTimeout(() => {
            this.pending.delete(id);
            reject(new TransportError(0, "timeout", `The extension did not answer ${method} within ${Math.round(this.timeoutMs / 1000)} s.`));
          }, this.timeoutMs);
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, timer });
      this.post({ kind: "request", id, method, params });
    });
  }

  /**
   * Messages cross as JSON, as the HTTP transport's bodies do: a view's reactive state (Svelte's `$state` objects
   * are Proxies) is not structured-cloneable, and postMessage would throw DataCloneError on it.
   */
  private post(message: ViewToHostMessage): void {
    this.api.postMessage(JSON.parse(JSON.stringify(message)) as ViewToHostMessage);
  }

  private receive(message: HostToViewMessage): void {
    if (!message || typeof message !== "object") return;
    if (message.kind === "response") {
      const pending = this.pending.get(message.id);
      if (!pending) return; // Timed out already.
      this.pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.error) pending.reject(new TransportError(message.error.status, message.error.code, message.error.message));
      else pending.resolve(message.result ?? null);
      return;
    }
    if (message.kind === "notification") this.notify(message);
  }

  private notify(message: NotificationMessage): void {
    if (message.method === STREAM_DATA) {
      const p = message.params as StreamDataParams;
      this.streams.get(p.streamId)?.onData(p.data);
    } else if (message.method === STREAM_INTERRUPTED) {
      this.streams.get((message.params as StreamInterruptedParams).streamId)?.onInterrupt();
    } else if (message.method === STREAM_END) {
      const p = message.params as StreamEndParams;
      const listener = this.streams.get(p.streamId);
      this.streams.delete(p.streamId);
      listener?.onEnd(p.error && new TransportError(p.error.status, p.error.code, p.error.message));
    }
    for (const handler of this.notificationHandlers.get(message.method) ?? []) handler(message.params);
  }

  /** Opens a stream and resolves once it ends; `onData` sees every piece in order. */
  private openStream(spec: StreamSpec, listener: Omit<StreamListener, "onEnd">, signal?: AbortSignal): { done: Promise<void>; close: () => void } {
    let streamId: string | undefined;
    let closed = false;
    let settle!: { resolve: () => void; reject: (e: TransportError) => void };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const close = () => {
      if (closed) return;
      closed = true;
      if (streamId !== undefined) {
        this.streams.delete(streamId);
        this.command(STREAM_CLOSE_COMMAND, { streamId });
      }
      settle.resolve();
    };
    signal?.addEventListener("abort", close, { once: true });
    this.request("stream/open", spec).then(
      ({ streamId: id }) => {
        streamId = id;
        if (closed) {
          this.command(STREAM_CLOSE_COMMAND, { streamId: id });
          return;
        }
        this.streams.set(id, {
          ...listener,
          onEnd: (error) => {
            closed = true;
            if (error) settle.reject(error);
            else settle.resolve();
          },
        });
      },
      (error: TransportError) => {
        closed = true;
        settle.reject(error);
      },
    );
    return { done, close };
  }

  async runTraining(onOutput: (text: string) => void, signal?: AbortSignal): Promise<void> {
    await this.openStream({ kind: "training" }, { onData: (d) => typeof d === "string" && onOutput(d), onInterrupt: () => {} }, signal).done;
  }

  subscribeJobEvents(jobId: string, handlers: JobEventHandlers): Unsubscribe {
    const stream = this.openStream(
      { kind: "jobEvents", jobId },
      {
        onData: (d) => {
          if (Array.isArray(d)) handlers.onEvents(d);
          else if (typeof d !== "string" && !("usage" in d)) handlers.onEvent(d);
        },
        onInterrupt: () => handlers.onError(),
      },
    );
    // Any end (server `end`, or a failure to open) means no more events; the failure shows as the banner.
    stream.done.then(
      () => handlers.onEnd(),
      () => handlers.onError(),
    );
    return stream.close;
  }

  async streamChat(request: ChatRequest, onDelta: (text: string) => void, signal?: AbortSignal): Promise<ChatUsage | undefined> {
    let usage: ChatUsage | undefined;
    const onData = (d: StreamData) => {
      if (typeof d === "string") onDelta(d);
      else if (!Array.isArray(d) && "usage" in d) usage = d.usage;
    };
    await this.openStream({ kind: "chat", request }, { onData, onInterrupt: () => {} }, signal).done;
    return usage;
  }

  async copyText(text: string): Promise<void> {
    await this.request("host/copyText", { text });
  }

  async saveFile(file: SaveFileRequest): Promise<void> {
    await this.request("host/saveFile", file, { waitForUser: true });
  }

  async saveDownload(request: DownloadRequest): Promise<SavedDownload | undefined> {
    const { path } = await this.request("host/saveDownload", request, { waitForUser: true });
    return path === null ? undefined : { name: path.split(/[\\/]/).pop() ?? path, path };
  }

  /** VS Code only: opens the Playground panel on a job's adapter (`compare`: beside its base model). */
  async openPlayground(jobId: string, options: { compare?: boolean } = {}): Promise<void> {
    await this.request("host/openPlayground", { jobId, compare: options.compare === true });
  }

  /** VS Code only: deletes a job behind the host's modal confirmation; true once deleted, false when kept. */
  async confirmAndDeleteJob(jobId: string): Promise<boolean> {
    const { deleted } = await this.request("host/deleteJob", { jobId }, { waitForUser: true });
    return deleted;
  }

  /** VS Code only: opens a dataset of the project in an editor at a 1-based line. */
  async openDatasetLine(file: string, line: number): Promise<void> {
    await this.request("host/openDatasetLine", { file, line });
  }

  /** VS Code only: opens a job's Job detail panel. */
  async openJob(jobId: string): Promise<void> {
    await this.request("host/openJob", { jobId });
  }
}

installRouteMethods(VsCodeTransport.prototype, studioApi, (transport, _route, parts, name) =>
  transport.request(`api/${name}` as ApiMethod, apiParams(parts) as never),
);
