/**
 * A TCP proxy between a worker and its cloud that can break the link for real: every byte of the
 * worker link (WebSocket) and of its HTTP transfers goes through it, so a test can cut all open
 * connections, or act at the moment a chosen request starts (the worker asks for a dataset right
 * after a claim; it sends a PUT for each artifact). `storageFullForTest` answers a request with the
 * cloud's 507 envelope instead of forwarding it: a full disk is the one fault the proxy fakes.
 */
import net from "node:net";

/** A hook on requests the worker sends: `match` sees the start of each request (method, path and query). */
export interface RequestTrap {
  match: (requestLine: string) => boolean;
  /** Runs when a matching request passes; `storageFullForTest` answers it with a full-disk refusal. */
  fire: (helpers: { storageFullForTest: () => void }) => void;
  /** Fires on every matching request until disarmed (default: on the first one only). */
  persistent?: boolean;
}

export class FaultProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private traps: RequestTrap[] = [];

  private constructor(private readonly targetPort: number) {
    this.server = net.createServer((client) => this.accept(client));
  }

  static async start(targetPort: number): Promise<FaultProxy & { port: number }> {
    const proxy = new FaultProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    return Object.assign(proxy, { port: (proxy.server.address() as net.AddressInfo).port });
  }

  /** Arms a trap for the next matching request. */
  arm(trap: RequestTrap): void {
    this.traps.push(trap);
  }

  disarm(): void {
    this.traps = [];
  }

  /** Cuts every open connection (the worker link and any transfer) at once. */
  dropAll(): number {
    const count = this.pairs.size;
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    return count;
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, "127.0.0.1");
    const pair = { client, upstream };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    upstream.on("data", (chunk) => client.write(chunk));
    client.on("data", (chunk: Buffer) => {
      // Request lines are plain text at the start of a request; WebSocket frames from the worker are masked.
      const text = chunk.toString("latin1");
      const lines = text.match(/^(GET|PUT|POST) \S+ HTTP\/1\.1$/gm) ?? [];
      for (const line of lines) {
        const trap = this.traps.find((t) => t.match(line));
        if (!trap) continue;
        if (!trap.persistent) this.traps = this.traps.filter((t) => t !== trap);
        let replied = false;
        trap.fire({
          storageFullForTest: () => {
            replied = true;
            const body = JSON.stringify({
              error: { code: "insufficient_storage", message: "the cloud's disk is full (injected by the test's fault proxy)", requestId: "fault-proxy" },
            });
            client.end(
              `HTTP/1.1 507 Insufficient Storage\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
            );
            upstream.destroy();
          },
        });
        if (replied || client.destroyed) return;
      }
      if (!upstream.destroyed) upstream.write(chunk);
    });
  }
}
