/**
 * Failures answered before any route runs come in the listener's own error envelope (issue 26 part 8): a URL
 * whose path segment is too long (414), a bad percent-encoding, headers over Node's limit, a request that is not
 * HTTP. The control plane and the studio answer `{"error":{"code","message","requestId"}}` with the id in
 * `x-request-id` too; the edge answers OpenAI's envelope. And a malformed JSON body gets the cloud's
 * `invalid_json` from the studio as from the cloud (part 6).
 */
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { startStudioStack, type StudioStack } from "../support/studioStack.js";
import { http as cloudHttp, newAccount } from "../support/api.js";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/** One request with the target and headers exactly as given. */
function send(base: string, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, method, path: target, headers, agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, json: JSON.parse(text) }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** Bytes that are not HTTP, and the answer read back from the socket. */
function sendGarbage(base: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write("NOT AN HTTP REQUEST\r\n\r\n"));
    let raw = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (raw += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, body] = raw.split("\r\n\r\n");
      const lines = head!.split("\r\n");
      const headers: http.IncomingHttpHeaders = {};
      for (const line of lines.slice(1)) {
        const at = line.indexOf(":");
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(lines[0]!.split(" ")[1]), headers, json: JSON.parse(body!) });
    });
  });
}

/** `longUrl` is sent with `longMethod`: a route with a parameter there (the studio answers any GET with its files). */
type Listener = { name: string; base: () => string; longMethod: string; longUrl: string; badUrl: string; envelope: "ours" | "openai" };

describe("framework-level failures in the API's envelope", function () {
  this.timeout(60_000);
  let stack: StudioStack;

  before(async () => {
    stack = await startStudioStack();
  });
  after(async () => {
    await stack?.stop();
  });

  const long = "a".repeat(300);
  const listeners: Listener[] = [
    { name: "control plane", base: () => stack.cloud.cloudUrl, longMethod: "GET", longUrl: `/v1/jobs/${long}`, badUrl: "/v1/jobs/%zz", envelope: "ours" },
    { name: "edge", base: () => stack.cloud.edgeUrl, longMethod: "GET", longUrl: `/d/${long}/v1/models`, badUrl: "/d/%zz/v1/models", envelope: "openai" },
    { name: "studio", base: () => stack.studio.url, longMethod: "POST", longUrl: `/api/jobs/${long}/cancel`, badUrl: "/api/jobs/%zz", envelope: "ours" },
  ];

  function assertEnvelope(listener: Listener, answer: Answer, status: number, code: string): void {
    const label = `${listener.name}: ${JSON.stringify(answer.json)}`;
    assert.equal(answer.status, status, label);
    assert.equal(answer.json.error.code, code, label);
    assert.equal(typeof answer.json.error.message, "string", label);
    assert.ok(answer.json.error.message.length > 0, label);
    if (listener.envelope === "ours") {
      assert.deepEqual(Object.keys(answer.json.error).sort(), ["code", "message", "requestId"], label);
      assert.equal(typeof answer.json.error.requestId, "string", label);
      assert.equal(answer.headers["x-request-id"], answer.json.error.requestId, label);
    } else {
      assert.deepEqual(Object.keys(answer.json.error).sort(), ["code", "message", "param", "type"], label);
      assert.equal(answer.json.error.type, "invalid_request_error", label);
    }
  }

  const hostOf = (listener: Listener) => ({ host: new URL(listener.base()).host });

  for (const listener of listeners) {
    describe(listener.name, () => {
      it("a path segment too long: 414 url_too_long", async () => {
        assertEnvelope(listener, await send(listener.base(), listener.longMethod, listener.longUrl, hostOf(listener)), 414, "url_too_long");
      });

      it("a bad percent-encoding: 400 invalid_url", async () => {
        assertEnvelope(listener, await send(listener.base(), "GET", listener.badUrl, hostOf(listener)), 400, "invalid_url");
      });

      it("headers (or a URL) over Node's limit: 431 headers_too_large", async () => {
        assertEnvelope(listener, await send(listener.base(), "GET", "/", { ...hostOf(listener), "x-big": "b".repeat(20_000) }), 431, "headers_too_large");
        assertEnvelope(listener, await send(listener.base(), "GET", `/${"c".repeat(20_000)}`, hostOf(listener)), 431, "headers_too_large");
      });

      it("bytes that are not HTTP: 400 malformed_request", async () => {
        assertEnvelope(listener, await sendGarbage(listener.base()), 400, "malformed_request");
      });
    });
  }

  it("a malformed JSON body: the studio answers the cloud's invalid_json, with the cloud's words", async () => {
    const { token } = await newAccount(stack.cloud);
    const malformed = '{"slug": "x", ';
    const direct = await cloudHttp(stack.cloud, "POST", "/v1/deployments", { token, raw: malformed, headers: { "content-type": "application/json" } });
    assert.equal(direct.status, 400, direct.text);
    assert.equal(direct.body.error.code, "invalid_json");
    const studioListener = listeners[2]!;
    for (const [route, body] of [
      ["/api/deployments", malformed],
      ["/api/inference/chat", "{not json"],
      ["/api/credentials", "["],
    ] as const) {
      const viaStudio = await send(
        stack.studio.url,
        "POST",
        route,
        { ...hostOf(studioListener), "x-svc-studio-token": stack.studio.token, "content-type": "application/json" },
        body,
      );
      assertEnvelope(studioListener, viaStudio, 400, "invalid_json");
      assert.equal(viaStudio.json.error.message, direct.body.error.message, route);
    }
  });
});
