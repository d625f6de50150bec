/**
 * The inference child's loaded state: base models (LRU bounded by bytes of weights) and one
 * llama.cpp context per (model, adapter) pair (LRU bounded by count, since each holds a KV cache).
 * A LoRA adapter attaches per context in llama.cpp, so "load the adapter once" means "keep its context".
 */
import { stat } from "node:fs/promises";
import { loadLlamaCppModel, type LlamaCppModel, type LlamaCppSession } from "../../../engine/infer/llama-cpp.js";
import { LruCache } from "./lruCache.js";

export interface EngineCacheOptions {
  threads: number;
  maxModelBytes: number;
  maxContexts: number;
}

export class EngineCache {
  private readonly models: LruCache<LlamaCppModel>;
  private readonly sessions: LruCache<LlamaCppSession>;

  constructor(private readonly options: EngineCacheOptions) {
    this.models = new LruCache(options.maxModelBytes, async (modelPath, model) => {
      // A context cannot outlive its model.
      await this.sessions.evictWhere((key) => key.startsWith(modelPath + "\0"));
      await model.dispose();
    });
    this.sessions = new LruCache(options.maxContexts, (_key, session) => session.dispose());
  }

  /** A context for the model (and adapter), pinned together with its model until released. */
  async session(modelPath: string, adapterPath: string | null): Promise<{ session: LlamaCppSession; release: () => void }> {
    const size = (await stat(modelPath)).size;
    const model = await this.models.acquire(modelPath, size, () => loadLlamaCppModel({ modelPath, threads: this.options.threads }));
    try {
      if (adapterPath) await stat(adapterPath);
      const session = await this.sessions.acquire(`${modelPath}\0${adapterPath ?? ""}`, 1, () =>
        model.value.createSession({ adapters: adapterPath ? [{ path: adapterPath }] : [] }),
      );
      return {
        session: session.value,
        release: () => {
          session.release();
          model.release();
        },
      };
    } catch (err) {
      model.release();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.sessions.clear();
    await this.models.clear();
  }
}
