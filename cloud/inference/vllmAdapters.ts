/**
 * Adapters a vLLM upstream loads at run time (vLLM started with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True):
 * the adapter's PEFT pair is copied into the folder the cloud shares with vLLM, then
 * `POST /v1/load_lora_adapter {lora_name, lora_path}` loads it and chats name it as their `model`;
 * `POST /v1/unload_lora_adapter {lora_name}` drops it. vLLM's `lora_path` is a path on its own
 * machine, hence the shared folder. What this instance last saw of each adapter is kept for the
 * endpoint page; vLLM itself is the truth (a restarted vLLM has forgotten every adapter, which a
 * chat's 404 reveals: cloud/inference/index.ts loads it again then).
 */
import { randomBytes } from "node:crypto";
import { access, copyFile, mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { UpstreamAdapter } from "../../sdk/api/deployments.js";
import { InferenceError, type UpstreamLora } from "./types.js";

type Seen = Pick<UpstreamAdapter, "state" | "error">;

export class VllmAdapters {
  private readonly seen = new Map<string, Seen>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    /** Longest a load or unload may take: vLLM reads the files and moves the weights to its GPU. */
    private readonly timeoutMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** What this instance last saw of the adapter on that upstream. */
  state(baseUrl: string, lora: UpstreamLora): UpstreamAdapter {
    const seen = this.seen.get(key(baseUrl, lora.name)) ?? { state: "not_loaded", error: null };
    return { name: lora.name, path: lora.dirOnServer, ...seen };
  }

  /** Loads the adapter unless this instance has seen it loaded; concurrent callers share one load. */
  ensureLoaded(baseUrl: string, lora: UpstreamLora): Promise<void> {
    if (this.seen.get(key(baseUrl, lora.name))?.state === "loaded") return Promise.resolve();
    return this.load(baseUrl, lora);
  }

  /** Loads it again whatever this instance saw (vLLM answered that it has no such model). */
  reload(baseUrl: string, lora: UpstreamLora): Promise<void> {
    this.seen.delete(key(baseUrl, lora.name));
    return this.load(baseUrl, lora);
  }

  /** Unloads it; an adapter vLLM does not have (restarted since) is as good as unloaded. Failures are logged, not thrown. */
  async unload(baseUrl: string, lora: UpstreamLora): Promise<void> {
    this.seen.delete(key(baseUrl, lora.name));
    const answer = await this.post(baseUrl, "unload_lora_adapter", { lora_name: lora.name }).catch((err: Error) => ({ status: 0, message: err.message }));
    if (answer.status === 200 || answer.status === 404) return;
    this.log(`vLLM at ${baseUrl} did not unload adapter ${lora.name}: ${answer.message}`);
  }

  private load(baseUrl: string, lora: UpstreamLora): Promise<void> {
    const k = key(baseUrl, lora.name);
    const running = this.loading.get(k);
    if (running !== undefined) return running;
    const done = this.loadOnce(baseUrl, lora).finally(() => this.loading.delete(k));
    this.loading.set(k, done);
    return done;
  }

  private async loadOnce(baseUrl: string, lora: UpstreamLora): Promise<void> {
    const k = key(baseUrl, lora.name);
    let answer: { status: number; message: string };
    try {
      await writePeftFolder(lora);
      answer = await this.post(baseUrl, "load_lora_adapter", { lora_name: lora.name, lora_path: lora.dirOnServer });
    } catch (err) {
      answer = { status: 0, message: (err as Error).message };
    }
    // vLLM refuses a second load of a name it holds: for us that adapter is loaded (its files never change under its name).
    if (answer.status === 200 || (answer.status === 400 && /already been loaded/i.test(answer.message))) {
      this.seen.set(k, { state: "loaded", error: null });
      return;
    }
    const error = `vLLM at ${baseUrl} did not load adapter ${lora.name} from ${lora.dirOnServer}: ${answer.message}`;
    this.seen.set(k, { state: "failed", error });
    throw new InferenceError(502, "adapter_load_failed", error);
  }

  /** One POST to vLLM; its status and message (vLLM answers success as plain text, errors as JSON). */
  private async post(baseUrl: string, route: string, body: Record<string, string>): Promise<{ status: number; message: string }> {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}/${route}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      throw new Error(e.name === "TimeoutError" ? `no answer in ${this.timeoutMs / 1000} s` : `unreachable (${e.cause?.code ?? e.message})`);
    }
    const text = await response.text();
    if (response.status === 200) return { status: 200, message: text };
    return { status: response.status, message: `HTTP ${response.status}: ${errorMessage(text)}` };
  }
}

/** vLLM's ErrorResponse, flat (`{message, type, code}`) in older releases and under `error` in newer ones. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: string; error?: { message?: string } | string };
    const message = typeof body.error === "object" ? body.error.message : (body.message ?? body.error);
    if (message) return message;
  } catch {
    // not JSON: the text itself
  }
  return text.trim().slice(0, 300) || "no message";
}

/**
 * The adapter's folder in the shared dir, as PEFT names its files. An adapter's files never change
 * under its name, so a complete folder is kept; a new one is written beside it and renamed into
 * place, so vLLM never reads half a file.
 */
async function writePeftFolder(lora: UpstreamLora): Promise<void> {
  const files = [path.join(lora.dir, "adapter_model.safetensors"), path.join(lora.dir, "adapter_config.json")];
  const complete = await Promise.all(files.map((f) => access(f))).then(
    () => true,
    () => false,
  );
  if (complete) return;
  const staging = `${lora.dir}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await mkdir(staging, { recursive: true });
    await copyFile(lora.weightsFile, path.join(staging, "adapter_model.safetensors"));
    await copyFile(lora.configFile, path.join(staging, "adapter_config.json"));
    await rm(lora.dir, { recursive: true, force: true });
    await rename(staging, lora.dir);
  } catch (err) {
    throw new Error(`could not write its PEFT files to ${lora.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

const key = (baseUrl: string, name: string) => `${baseUrl}\0${name}`;
