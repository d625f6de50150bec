/**
 * A stand-in for a vLLM OpenAI server started with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True: a real
 * HTTP server with vLLM's documented routes and answers (vllm/entrypoints/openai/serving_models.py),
 * for tests on machines without a GPU. `/v1/load_lora_adapter` reads the PEFT folder at
 * `lora_path` as vLLM does (adapter_config.json and adapter_model.safetensors; "No adapter found"
 * otherwise), and a chat naming a loaded adapter answers with the adapter's name, its rank and the
 * sha256 of the weights file it read, so a test sees which adapter and which files served it.
 * `restart()` is a vLLM restart on the same port: it forgets every adapter loaded at run time.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface StandInLora {
  name: string;
  path: string;
  config: Record<string, unknown>;
  weightsSha256: string;
}

export interface VllmStandIn {
  /** `http://127.0.0.1:PORT/v1`, the base URL a client registers. */
  readonly url: string;
  readonly baseModel: string;
  /** Adapters loaded now, by name. */
  readonly loras: Map<string, StandInLora>;
  /** Every load and unload request, in order: `load NAME PATH` (with ` -> STATUS` when refused), `unload NAME`. */
  readonly calls: string[];
  /** The `model` of the last chat. */
  lastChatModel: string | null;
  /** The answer a chat naming this adapter gets. */
  answerFor(lora: Pick<StandInLora, "name" | "config" | "weightsSha256">): string;
  stop(): Promise<void>;
  /** Starts again on the same port with no run-time adapters (a restarted vLLM). */
  restart(): Promise<void>;
}

export async function startVllmStandIn(baseModel = "Qwen/Qwen3-0.6B", atPort = 0): Promise<VllmStandIn> {
  let server = http.createServer((req, res) => void handle(req, res));
  await listen(server, atPort);
  const port = (server.address() as AddressInfo).port;
  const standIn: VllmStandIn = {
    url: `http://127.0.0.1:${port}/v1`,
    baseModel,
    loras: new Map(),
    calls: [],
    lastChatModel: null,
    answerFor: (lora) => `adapter ${lora.name} r=${String(lora.config.r)} weights ${lora.weightsSha256}`,
    stop: () => close(server),
    async restart() {
      await close(server);
      standIn.loras.clear();
      server = http.createServer((req, res) => void handle(req, res));
      await listen(server, port);
    },
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = raw ? (JSON.parse(raw) as Record<string, any>) : {};
    if (req.method === "GET" && req.url === "/v1/models") {
      const cards = [
        { id: baseModel, object: "model", root: baseModel, parent: null },
        ...[...standIn.loras.values()].map((l) => ({ id: l.name, object: "model", root: l.path, parent: baseModel })),
      ];
      return json(res, 200, { object: "list", data: cards });
    }
    if (req.method === "POST" && req.url === "/v1/load_lora_adapter") return load(body, res);
    if (req.method === "POST" && req.url === "/v1/unload_lora_adapter") {
      standIn.calls.push(`unload ${body.lora_name}`);
      if (!standIn.loras.delete(body.lora_name)) return error(res, 404, "NotFoundError", `The lora adapter '${body.lora_name}' cannot be found.`);
      return text(res, `Success: LoRA adapter '${body.lora_name}' removed successfully.`);
    }
    if (req.method === "POST" && req.url === "/v1/chat/completions") {
      standIn.lastChatModel = body.model;
      const lora = standIn.loras.get(body.model);
      if (!lora && body.model !== baseModel) return error(res, 404, "NotFoundError", `The model \`${body.model}\` does not exist.`);
      const content = lora ? standIn.answerFor(lora) : `base ${baseModel}`;
      return json(res, 200, {
        id: "chatcmpl-standin",
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      });
    }
    return error(res, 404, "NotFoundError", "Not Found");
  }

  function load(body: Record<string, any>, res: http.ServerResponse): void {
    const { lora_name: name, lora_path: dir } = body;
    const refuse = (status: number, type: string, message: string) => {
      standIn.calls.push(`load ${name} ${dir} -> ${status}`);
      error(res, status, type, message);
    };
    if (!name || !dir) return refuse(400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.");
    if (standIn.loras.has(name)) return refuse(400, "InvalidUserInput", `The lora adapter '${name}' has already been loaded.`);
    let lora: StandInLora;
    try {
      const config = JSON.parse(readFileSync(path.join(dir, "adapter_config.json"), "utf8"));
      const weightsSha256 = createHash("sha256")
        .update(readFileSync(path.join(dir, "adapter_model.safetensors")))
        .digest("hex");
      lora = { name, path: dir, config, weightsSha256 };
    } catch {
      // vLLM's words for a lora_path it cannot read, answered as 404 by its route.
      return refuse(404, "NotFoundError", `Loading lora ${name} failed: No adapter found for ${dir}`);
    }
    standIn.calls.push(`load ${name} ${dir}`);
    standIn.loras.set(name, lora);
    text(res, `Success: LoRA adapter '${name}' added successfully.`);
  }

  return standIn;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function text(res: http.ServerResponse, body: string): void {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(body);
}

/** vLLM's ErrorResponse under `error`, as its recent releases answer. */
function error(res: http.ServerResponse, status: number, type: string, message: string): void {
  json(res, status, { error: { message, type, param: null, code: status } });
}

const listen = (server: http.Server, port: number) =>
  new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));

const close = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
