/**
 * The edge's upstream connections (issue 15): chats to one upstream share keep-alive sockets, and
 * a request that meets a socket the upstream dropped as it was reused is sent again on a new one
 * instead of failing with a 502. Real loopback servers; the second one drops sockets on purpose
 * (the race an idle-timeout close causes, made deterministic).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { upstreamChat } from "../../../cloud/inference/upstream.js";
import { UpstreamPool } from "../../../cloud/inference/upstreamPool.js";
import type { ChatEvent } from "../../../cloud/inference/types.js";

const ANSWER = JSON.stringify({
  choices: [{ index: 0, message: { role: "assistant", content: "white" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

interface Upstream {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** Answers every completion at once; `dropSecondRequest`: closes a connection when its second request arrives, unanswered. */
async function startUpstream(dropSecondRequest: boolean): Promise<Upstream> {
  const served = new WeakMap<Socket, number>();
  const server = http.createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (dropSecondRequest && count === 2) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(ANSWER));
  });
  const state: Upstream = {
    url: "",
    connections: 0,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
  server.on("connection", () => (state.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

async function ask(pool: UpstreamPool, url: string): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of upstreamChat(pool, url, "m", { messages: [{ role: "user", content: "What color is milk?" }] }, { stream: false }))
    events.push(event);
  return events;
}

describe("edge: upstream connection pool", () => {
  let pool: UpstreamPool;
  beforeEach(() => (pool = new UpstreamPool()));
  afterEach(() => pool.close());

  it("reuses one keep-alive connection for consecutive chats", async () => {
    const upstream = await startUpstream(false);
    try {
      for (let i = 0; i < 5; i++) assert.equal((await ask(pool, upstream.url))[0].type, "text");
      assert.equal(upstream.connections, 1);
    } finally {
      await upstream.close();
    }
  });

  it("sends a chat again on a new connection when the upstream dropped the reused one", async () => {
    const upstream = await startUpstream(true);
    try {
      assert.deepEqual(
        (await ask(pool, upstream.url)).map((e) => e.type),
        ["text", "done"],
      );
      // The pooled socket is dropped when this request arrives on it; the retry opens a second one.
      assert.deepEqual(
        (await ask(pool, upstream.url)).map((e) => e.type),
        ["text", "done"],
      );
      assert.equal(upstream.connections, 2);
    } finally {
      await upstream.close();
    }
  });
});
