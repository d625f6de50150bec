/**
 * Runs one answer of a deployment under its key's rules and records its usage: admission before
 * anything is generated (a refused request costs no inference), the real tokens counted when the
 * answer ends (a stream's at its end; a client that left is charged the tokens the model decoded
 * before it stopped), usage noted for the batched recorder.
 */
import type { FastifyReply } from "fastify";
import type { ChatCall, ChatEvent, ChatStream, InferenceService } from "../inference/index.js";
import type { Usage } from "../inference/types.js";
import type { CloudMetrics } from "../metrics.js";
import { toEdgeError } from "./errors.js";
import { isMetered, type KeyMeter, type KeyRulesState } from "./keyMeter.js";
import type { UsageRecorder } from "./usageRecorder.js";

/** Reserved for the completion when the request sets no max_tokens (the most svc's models answer with). */
export const DEFAULT_COMPLETION_RESERVE = 512;
/** How long a cancelled local generation's final usage is awaited before the streamed pieces are counted instead. */
const ABANDONED_USAGE_WAIT_MS = 5000;

/** The most tokens a request can cost: its JSON's bytes bound its prompt, max_tokens its completions. */
export function tokenReserve(params: ChatCall, choices: number): number {
  return Buffer.byteLength(JSON.stringify(params.messages)) + (params.maxTokens ?? DEFAULT_COMPLETION_RESERVE) * choices;
}

/** What the edge shares between requests for keys: the meter and the usage recorder. */
export interface KeyedServices {
  meter: KeyMeter;
  usage: UsageRecorder;
  metrics: CloudMetrics;
}

export interface KeyedRun extends KeyedServices {
  deploymentId: string;
  /** The deployment's slug: the `deployment` label of the metrics. */
  slug: string;
  key: KeyRulesState | null;
}

export async function answerWithKey(
  reply: FastifyReply,
  run: KeyedRun,
  inference: InferenceService,
  reserve: number,
  answer: (inference: InferenceService) => Promise<void>,
): Promise<void> {
  const { key } = run;
  // Without a key (auth mode none) there is nothing to limit or to charge.
  if (!key) return answer(inference);
  const labels = { deployment: run.slug, key_prefix: key.prefix };
  const started = performance.now();
  let admission = null;
  if (isMetered(key)) {
    try {
      admission = await run.meter.admit(key, reserve);
    } catch (err) {
      // Refused requests count in the key's usage as errors; nothing was generated.
      const refused = toEdgeError(err).status;
      run.usage.note(key.id, run.deploymentId, { status: refused, promptTokens: 0, completionTokens: 0, latencyMs: null, timeToFirstTokenMs: null });
      run.metrics.keyRequests.inc({ ...labels, status: String(refused) });
      throw err;
    }
  }
  if (admission) for (const [name, value] of Object.entries(admission.headers)) void reply.header(name, value);
  const tap = new UsageTap(inference);
  let status = 200;
  try {
    await answer(tap.service);
    status = reply.statusCode;
  } catch (err) {
    status = toEdgeError(err).status;
    throw err;
  } finally {
    const latencyMs = performance.now() - started;
    const timeToFirstTokenMs = tap.firstTextAt === null ? null : tap.firstTextAt - started;
    run.metrics.keyLatency.observe(labels, latencyMs / 1000);
    if (timeToFirstTokenMs !== null) run.metrics.keyTimeToFirstToken.observe(labels, timeToFirstTokenMs / 1000);
    run.metrics.keyRequests.inc({ ...labels, status: String(status) });
    // Off the request path: the answer has been sent; its cost is settled when known.
    void tap.total().then(async (usage) => {
      run.usage.note(key.id, run.deploymentId, {
        status,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        latencyMs,
        timeToFirstTokenMs,
      });
      run.metrics.keyTokens.inc({ ...labels, kind: "prompt" }, usage.promptTokens);
      run.metrics.keyTokens.inc({ ...labels, kind: "completion" }, usage.completionTokens);
      // Only a budget (its hold) and a tokens-per-minute limit need the real tokens written back.
      if (admission && (key.budget || key.tokensPerMinute !== null))
        await run.meter.settle(key, admission, usage.promptTokens + usage.completionTokens).catch(() => undefined);
    });
  }
}

interface Generation {
  pieces: number;
  usage: Usage | null;
  /** It failed (no tokens to wait for); one that ended without `done` was cut short by its client. */
  failed: boolean;
  abandoned: Promise<Usage | null>;
}

/** Wraps the inference service of one request to learn what its generations really cost. */
class UsageTap {
  private readonly generations: Generation[] = [];
  readonly service: InferenceService;
  /** performance.now() of the first text of any generation; null while none came. */
  firstTextAt: number | null = null;

  constructor(inner: InferenceService) {
    const generations = this.generations;
    const tap = this;
    this.service = {
      resolve: (target) => inner.resolve(target),
      deploymentChanged: (before, after) => inner.deploymentChanged(before, after),
      upstreamAdapter: (backend) => inner.upstreamAdapter(backend),
      get device() {
        return inner.device;
      },
      get workerPid() {
        return inner.workerPid;
      },
      close: () => inner.close(),
      async chat(backend, params, options) {
        let heard: (usage: Usage) => void = () => undefined;
        // Its wait starts only for a generation cut short (in total()): a timer per answer would cost every request.
        const abandoned = new Promise<Usage | null>((resolve) => {
          heard = resolve;
        });
        const stream = await inner.chat(backend, params, { ...options, onAbandonedUsage: heard });
        const generation: Generation = { pieces: 0, usage: null, failed: false, abandoned };
        generations.push(generation);
        return counted(stream, generation, () => (tap.firstTextAt ??= performance.now()));
      },
    };
  }

  /** The prompt is read once for all choices; completions add up. */
  async total(): Promise<Usage> {
    let promptTokens = 0;
    let completionTokens = 0;
    for (const g of this.generations) {
      // Cut short by its client: the backend reports what it decoded before it stopped (local), else the pieces count.
      const usage = g.usage ?? (g.failed ? null : await withinWait(g.abandoned));
      promptTokens = Math.max(promptTokens, usage?.promptTokens ?? 0);
      completionTokens += usage?.completionTokens ?? g.pieces;
    }
    return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
  }
}

async function* counted(stream: ChatStream, generation: Generation, onText: () => void): AsyncGenerator<ChatEvent> {
  try {
    for await (const event of stream) {
      if (event.type === "done") generation.usage = event.usage;
      else if (event.type === "text") {
        if (generation.pieces === 0) onText();
        generation.pieces += 1;
      }
      yield event;
    }
  } catch (err) {
    generation.failed = true;
    throw err;
  }
}

/** The backend's final usage of a cancelled generation, or null when it does not come in time. */
function withinWait(usage: Promise<Usage | null>): Promise<Usage | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ABANDONED_USAGE_WAIT_MS);
    timer.unref();
  });
  return Promise.race([usage, late]).finally(() => clearTimeout(timer));
}
