/**
 * The host side of a panel's protocol (ui-shared/protocol/common.ts, STYLE.md 2 and 3), without
 * VS Code: it takes what the view posts, answers requests by id, runs streams, and holds every
 * host message until the view has said `webview/ready`. The panel adapter wires `post` to
 * `webview.postMessage` and `receive` to `onDidReceiveMessage`.
 */
import {
  READY_COMMAND,
  STREAM_CLOSE_COMMAND,
  STREAM_DATA,
  STREAM_END,
  STREAM_INTERRUPTED,
  type ApiMethod,
  type ApiRequests,
  type HostToViewMessage,
  type ResponseError,
  type StreamData,
  type StreamSpec,
} from "../../ui-shared/protocol/common.js";

/** One handler per request method the panel may send; `stream/open` is handled by the connection itself. */
export type RequestHandlers = {
  [M in Exclude<ApiMethod, "stream/open">]?: (params: ApiRequests[M]["params"]) => Promise<ApiRequests[M]["result"]>;
};

/** Where a running stream delivers its pieces. */
export interface StreamSink {
  data(data: StreamData): void;
  /** The stream broke and is being retried (job events): the view shows its banner. */
  interrupted(): void;
}

/** Runs one stream until it ends (resolve), fails (reject) or `signal` aborts. */
export type StreamRunner = (spec: StreamSpec, sink: StreamSink, signal: AbortSignal) => Promise<void>;

export interface PanelConnectionOptions {
  post(message: HostToViewMessage): unknown;
  handlers: RequestHandlers;
  runStream: StreamRunner;
  /** Called on every `webview/ready`: send the view its state (a reloaded view asks again). */
  onReady(): void;
}

export class PanelConnection {
  private isReady = false;
  private held: HostToViewMessage[] = [];
  private readonly streams = new Map<string, AbortController>();
  private nextStreamId = 1;
  private disposed = false;

  constructor(private readonly options: PanelConnectionOptions) {}

  get ready(): boolean {
    return this.isReady;
  }

  /** Pushes a notification; held until the view is ready. */
  notify(method: string, params: unknown): void {
    this.send({ kind: "notification", method, params });
  }

  receive(message: unknown): void {
    if (this.disposed || !message || typeof message !== "object") return;
    const m = message as { kind?: unknown; method?: unknown; id?: unknown; params?: unknown };
    if (typeof m.method !== "string") return;
    if (m.kind === "command") this.command(m.method, m.params);
    else if (m.kind === "request" && typeof m.id === "number") void this.request(m.id, m.method, m.params);
  }

  /** Stops every stream; nothing is posted afterwards. */
  dispose(): void {
    this.disposed = true;
    for (const controller of this.streams.values()) controller.abort();
    this.streams.clear();
    this.held = [];
  }

  private command(method: string, params: unknown): void {
    if (method === READY_COMMAND) {
      // A view that reloads says ready again; its old streams died with the old document.
      for (const controller of this.streams.values()) controller.abort();
      this.streams.clear();
      this.isReady = true;
      this.options.onReady();
      const held = this.held;
      this.held = [];
      for (const message of held) this.options.post(message);
    } else if (method === STREAM_CLOSE_COMMAND) {
      const streamId = (params as { streamId?: unknown } | undefined)?.streamId;
      if (typeof streamId !== "string") return;
      this.streams.get(streamId)?.abort();
      this.streams.delete(streamId);
    }
  }

  private async request(id: number, method: string, params: unknown): Promise<void> {
    if (method === "stream/open") {
      this.openStream(id, params as StreamSpec);
      return;
    }
    const handler = (this.options.handlers as Record<string, ((p: unknown) => Promise<unknown>) | undefined>)[method];
    if (!handler) {
      this.send({ kind: "response", id, error: { status: 400, code: "unknown_method", message: `The extension does not handle ${method}.` } });
      return;
    }
    try {
      const result = await handler(params ?? {});
      this.send({ kind: "response", id, result: result ?? null });
    } catch (error) {
      this.send({ kind: "response", id, error: toResponseError(error) });
    }
  }

  private openStream(id: number, spec: StreamSpec): void {
    const streamId = `s${this.nextStreamId++}`;
    const controller = new AbortController();
    this.streams.set(streamId, controller);
    // The response goes out first, so the view knows the id before any data arrives.
    this.send({ kind: "response", id, result: { streamId } });
    const sink: StreamSink = {
      data: (data) => !controller.signal.aborted && this.notify(STREAM_DATA, { streamId, data }),
      interrupted: () => !controller.signal.aborted && this.notify(STREAM_INTERRUPTED, { streamId }),
    };
    this.options.runStream(spec, sink, controller.signal).then(
      () => this.endStream(streamId, controller),
      (error: unknown) => this.endStream(streamId, controller, toResponseError(error)),
    );
  }

  private endStream(streamId: string, controller: AbortController, error?: ResponseError): void {
    // A stream the view closed itself gets no end notification: the view already forgot it.
    if (controller.signal.aborted) return;
    this.streams.delete(streamId);
    this.notify(STREAM_END, error ? { streamId, error } : { streamId });
  }

  private send(message: HostToViewMessage): void {
    if (this.disposed) return;
    if (!this.isReady) this.held.push(message);
    else this.options.post(message);
  }
}

/** Any thrown value as the protocol's error (TransportError and the studio's envelope keep status, code and message). */
export function toResponseError(error: unknown): ResponseError {
  if (error && typeof error === "object" && "status" in error && "code" in error && "message" in error) {
    const e = error as { status: unknown; code: unknown; message: unknown };
    return { status: Number(e.status) || 0, code: String(e.code), message: String(e.message) };
  }
  return { status: 0, code: "host_error", message: error instanceof Error ? error.message : String(error) };
}
