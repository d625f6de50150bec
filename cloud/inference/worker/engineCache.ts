/**
 * The inference child's loaded state: base models (LRU bounded by bytes of weights) and, per
 * (model, adapter) pair, a pool of llama.cpp contexts (LRU bounded by count, since each holds a
 * KV cache). A LoRA adapter attaches per context in llama.cpp, so "load the adapter once" means
 * "keep its contexts".
 *
 * Why a pool of contexts and not one context with several sequences: node-llama-cpp decodes all
 * sequences of a context in one batch per step, in lock-step, on that context's threads; more
 * than one llama.cpp thread per context collapses on a busy CPU, so one context decodes on one
 * core however many cores there are. Separate contexts decode on separate libuv threads and scale
 * with the cores. On an oversubscribed machine the batch's shared per-step cost wins instead
 * (test/bench/inference.bench.ts prints both): pools of several multi-sequence contexts would get
 * both. docs/decisions/0009-context-pool.md.
 */
import { stat } from "node:fs/promises";
import { loadLlamaCppModel, type LlamaCppModel, type LlamaCppSession } from "../../../engine/infer/llama-cpp.js";
import type { LlamaModelPlacement } from "../../../engine/infer/llamaDevice.js";
import { availableMemory } from "../../../engine/memory.js";
import { LruCache } from "./lruCache.js";

export interface EngineCacheOptions {
  threads: number;
  maxModelBytes: number;
  /** Bound on contexts over all pairs (idle ones are evicted least recently used first). */
  maxContexts: number;
  /** Contexts one (model, adapter) pair may hold, i.e. its generations that decode at once. */
  contextsPerModel: number;
  /** Hears that a model was loaded or evicted (its layers on the device are reported). */
  onModelsChanged?: () => void;
}

/** Share of the free memory (when a model loads) that one pair's pool of contexts may take. */
const POOL_MEMORY_SHARE = 0.5;

export class EngineCache {
  private readonly models: LruCache<LlamaCppModel>;
  private readonly sessions: LruCache<LlamaCppSession>;
  /** Per model path: how many contexts one pair of it may hold (the setting, capped by memory). */
  private readonly poolSizes = new Map<string, number>();
  private readonly placements = new Map<string, LlamaModelPlacement>();
  /** Round-robin cursor for the rare request that finds every context of its pool busy. */
  private overflow = 0;

  constructor(private readonly options: EngineCacheOptions) {
    this.models = new LruCache(options.maxModelBytes, async (modelPath, model) => {
      // A context cannot outlive its model.
      await this.sessions.evictWhere((key) => key.startsWith(modelPath + "\0"));
      this.poolSizes.delete(modelPath);
      this.placements.delete(modelPath);
      await model.dispose();
      this.options.onModelsChanged?.();
    });
    this.sessions = new LruCache(options.maxContexts, (_key, session) => session.dispose());
  }

  /**
   * An idle context of the pair's pool (created when the pool has room), pinned together with its
   * model until released. Prompt state never carries over: each generation clears its sequence.
   */
  async session(modelPath: string, adapterPath: string | null): Promise<{ session: LlamaCppSession; release: () => void }> {
    // The files are read (and a missing one reported as such) only when something must be loaded
    // from them: a stat per request was a thread-pool round trip before every first token.
    const size = this.models.has(modelPath) ? 0 : (await stat(modelPath)).size;
    const model = await this.models.acquire(modelPath, size, async () => {
      const loaded = await loadLlamaCppModel({ modelPath, threads: this.options.threads });
      this.placements.set(modelPath, loaded.placement);
      this.options.onModelsChanged?.();
      return loaded;
    });
    try {
      if (adapterPath && !this.sessions.has(slotKey(modelPath, adapterPath, 0))) await stat(adapterPath);
      // From here to sessions.acquire nothing awaits, so two requests never pick the same slot.
      const key = this.pickSlot(modelPath, adapterPath, this.poolSize(modelPath, model.value));
      const session = await this.sessions.acquire(key, 1, () => model.value.createSession({ adapters: adapterPath ? [{ path: adapterPath }] : [] }));
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

  /** Where each loaded model's layers are. */
  get loadedModels(): LlamaModelPlacement[] {
    return [...this.placements.values()];
  }

  async close(): Promise<void> {
    await this.sessions.clear();
    await this.models.clear();
  }

  /**
   * An idle slot, else an empty one, else (every context busy: the cloud admitted more than the
   * pool holds, e.g. when memory capped it) a busy one, whose session queues the request.
   */
  private pickSlot(modelPath: string, adapterPath: string | null, poolSize: number): string {
    const key = (slot: number) => slotKey(modelPath, adapterPath, slot);
    for (let slot = 0; slot < poolSize; slot++) if (this.sessions.isIdle(key(slot))) return key(slot);
    for (let slot = 0; slot < poolSize; slot++) if (!this.sessions.has(key(slot))) return key(slot);
    return key(this.overflow++ % poolSize);
  }

  private poolSize(modelPath: string, model: LlamaCppModel): number {
    let size = this.poolSizes.get(modelPath);
    if (size === undefined) {
      const byMemory = Math.floor((availableMemory() * POOL_MEMORY_SHARE) / Math.max(1, contextBytes(model)));
      size = Math.max(1, Math.min(this.options.contextsPerModel, byMemory));
      this.poolSizes.set(modelPath, size);
    }
    return size;
  }
}

function slotKey(modelPath: string, adapterPath: string | null, slot: number): string {
  return `${modelPath}\0${adapterPath ?? ""}\0${slot}`;
}

/** llama.cpp's estimate, or 0 (no cap) for a model whose metadata it cannot estimate from. */
function contextBytes(model: LlamaCppModel): number {
  try {
    return model.contextBytes();
  } catch {
    return 0;
  }
}
