/**
 * Keep-alive connections to OpenAI-compatible upstreams: one node:http(s) Agent per upstream
 * origin, so a proxied chat reuses a warm socket instead of paying `fetch`'s per-request
 * Request/Response/WHATWG-stream objects, which cost more CPU than the proxying itself.
 *
 * node:http rather than undici's `Pool`: undici is not a dependency of this package (only a
 * dev-time transitive one) and Node 20 does not export the copy it bundles; node:http ships with
 * every supported Node and measures within the bare-proxy baseline here (npm run bench -- edge).
 */
import http from "node:http";
import https from "node:https";

export interface UpstreamTarget {
  /** The upstream's base URL as registered (`http://gpu-box:8000/v1`), for messages. */
  baseUrl: string;
  request: typeof http.request;
  agent: http.Agent;
  hostname: string;
  port: string;
  /** Path of the chat completions operation under the base URL. */
  chatPath: string;
}

/** Stale keep-alive sockets (the upstream closed one as we reused it) fail with these before any answer. */
const STALE_SOCKET_ERRORS = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

export class UpstreamPool {
  private readonly targets = new Map<string, UpstreamTarget>();
  private readonly agents = new Map<string, http.Agent>();

  /** The parsed target of a base URL (cached: parsing a URL per request is measurable). */
  target(baseUrl: string): UpstreamTarget {
    let target = this.targets.get(baseUrl);
    if (!target) {
      const url = new URL(baseUrl);
      const secure = url.protocol === "https:";
      let agent = this.agents.get(url.origin);
      if (!agent) {
        // LIFO: under light load the same few sockets stay warm and the rest time out. An idle
        // socket closes after 4 s, before the 5 s keep-alive of common servers (uvicorn, Node), so
        // a reused socket is rarely one the upstream is closing (a shorter Keep-Alive hint wins).
        // The timeout only ever closes idle sockets: Node leaves a request in flight alone.
        const options = { keepAlive: true, scheduling: "lifo" as const, timeout: 4000 };
        agent = secure ? new https.Agent(options) : new http.Agent(options);
        this.agents.set(url.origin, agent);
      }
      target = {
        baseUrl,
        request: secure ? https.request : http.request,
        agent,
        hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: url.port,
        chatPath: `${url.pathname.replace(/\/+$/, "")}/chat/completions${url.search}`,
      };
      this.targets.set(baseUrl, target);
    }
    return target;
  }

  /**
   * Sends a POST of `body` and resolves with the response once its headers arrive. A request
   * that fails with a connection reset on a reused keep-alive socket before any answer is sent
   * again once, as Node's documentation advises: the usual cause is the upstream closing an idle
   * socket just as it was reused. `onRequest` gets each request sent (the retry too); to cancel
   * one, destroy it with an Error of your own (no errno code), which is never retried.
   */
  post(
    target: UpstreamTarget,
    body: string,
    headers: http.OutgoingHttpHeaders,
    onRequest: (request: http.ClientRequest) => void,
  ): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      let answered = false;
      const send = (retried: boolean) => {
        const request = target.request(
          { agent: target.agent, hostname: target.hostname, port: target.port, path: target.chatPath, method: "POST", headers },
          (response) => {
            answered = true;
            resolve(response);
          },
        );
        request.on("error", (err: NodeJS.ErrnoException) => {
          // After the answer began, a reset is the response's failure (its reader reports it), never a reason to resend.
          if (!answered && !retried && request.reusedSocket && STALE_SOCKET_ERRORS.has(err.code ?? "")) return send(true);
          reject(err);
        });
        onRequest(request);
        request.end(body);
      };
      send(false);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
    this.targets.clear();
  }
}
