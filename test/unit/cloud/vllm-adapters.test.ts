/**
 * VllmAdapters against vLLM's answers that the stand-in does not give: older releases' flat error body
 * (`{"object": "error", "message", "type", "code"}`) for an adapter already loaded, and a server that
 * accepts the request and never answers (the load fails within the timeout, readably, and is kept as the
 * adapter's state). A real HTTP server on loopback.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { UpstreamLora } from "../../../cloud/inference/types.js";
import { VllmAdapters } from "../../../cloud/inference/vllmAdapters.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

describe("cloud: vLLM run-time adapters (older error bodies, a server that never answers)", () => {
  let tmp: TempDir;
  let server: http.Server;
  let url: string;
  let answer: (req: http.IncomingMessage, res: http.ServerResponse, body: any) => void;
  const logged: string[] = [];

  before(async () => {
    tmp = await createTempDir("vllm-adapters");
    server = http.createServer(async (req, res) => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      answer(req, res, JSON.parse(raw));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await tmp.remove();
  });

  const lora = (name: string): UpstreamLora => {
    const weightsFile = path.join(tmp.path, `${name}.safetensors`);
    const configFile = path.join(tmp.path, `${name}.json`);
    writeFileSync(weightsFile, "weights");
    writeFileSync(configFile, '{"r": 4}');
    const dir = path.join(tmp.path, "shared", name);
    return { name, weightsFile, configFile, dir, dirOnServer: `/srv/lora/${name}` };
  };

  it("takes a flat 'already been loaded' answer as loaded, with the PEFT files in the shared folder", async () => {
    const seen: any[] = [];
    answer = (_req, res, body) => {
      seen.push(body);
      const flat = { object: "error", message: `The lora adapter '${body.lora_name}' has already been loaded.`, type: "InvalidUserInput", code: 400 };
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(flat));
    };
    const adapters = new VllmAdapters(5000, (line) => logged.push(line));
    const a = lora("svc-a");
    await adapters.ensureLoaded(url, a);
    assert.deepEqual(seen, [{ lora_name: "svc-a", lora_path: "/srv/lora/svc-a" }]);
    assert.deepEqual(adapters.state(url, a), { name: "svc-a", path: "/srv/lora/svc-a", state: "loaded", error: null });
    assert.equal(readFileSync(path.join(a.dir, "adapter_model.safetensors"), "utf8"), "weights");
    assert.equal(readFileSync(path.join(a.dir, "adapter_config.json"), "utf8"), '{"r": 4}');
    await adapters.ensureLoaded(url, a);
    assert.equal(seen.length, 1, "a loaded adapter is not loaded again");
  });

  it("fails a load the server never answers within the timeout, names why, and keeps it as the state", async () => {
    answer = () => undefined;
    const adapters = new VllmAdapters(300, (line) => logged.push(line));
    const b = lora("svc-b");
    const started = performance.now();
    await assert.rejects(adapters.ensureLoaded(url, b), (e: Error & { status?: number }) => {
      assert.equal(e.status, 502);
      assert.equal(e.message, `vLLM at ${url} did not load adapter svc-b from /srv/lora/svc-b: no answer in 0.3 s`);
      return true;
    });
    assert.ok(performance.now() - started < 5000, "bounded by the timeout");
    assert.equal(adapters.state(url, b).state, "failed");
  });

  it("takes an unload of an adapter vLLM does not have as done, and logs a refused one", async () => {
    const adapters = new VllmAdapters(5000, (line) => logged.push(line));
    answer = (_req, res) => res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"cannot be found"}}');
    logged.length = 0;
    await adapters.unload(url, lora("svc-c"));
    assert.deepEqual(logged, []);
    answer = (_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("engine dead");
    await adapters.unload(url, lora("svc-c"));
    assert.deepEqual(logged, [`vLLM at ${url} did not unload adapter svc-c: HTTP 500: engine dead`]);
  });
});
