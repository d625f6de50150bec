/**
 * Which adapter `svc export` takes when no --checkpoint is given: the job's best saved one, by the
 * rule the job page marks it with (ui-shared/bestCheckpoint.ts): among the steps an adapter was
 * saved at, the best evaluation at that very step on the job's metric (`earlyStopping.metric`,
 * else eval loss; ties to the earlier step). Undefined (the final adapter) when the final one is
 * best or nothing saved was evaluated.
 */
import type { CloudClient } from "../../sdk/client.js";
import type { Job } from "../../sdk/wire.js";

export async function bestSavedStep(client: CloudClient, job: Job): Promise<number | undefined> {
  const metric = (job.config.earlyStopping as { metric?: unknown } | undefined)?.metric === "evalTokenAccuracy" ? "evalTokenAccuracy" : "evalLoss";
  const artifacts = await client.listArtifacts(job.id);
  const finalStep = artifacts.find((a) => a.kind === "adapter")?.step;
  const saved = new Set(artifacts.filter((a) => a.kind === "adapter" || a.kind === "checkpoint").map((a) => a.step));
  const evaluated = new Map<number, number>();
  for await (const event of client.jobEvents(job.id)) {
    const value = event.data[metric];
    if (event.type === "training.log" && typeof value === "number" && Number.isFinite(value)) evaluated.set(Number(event.data.step), value);
  }
  let best: { step: number; value: number } | undefined;
  for (const step of [...saved].sort((a, b) => a - b)) {
    const value = evaluated.get(step);
    if (value === undefined) continue;
    if (best === undefined || (metric === "evalLoss" ? value < best.value : value > best.value)) best = { step, value };
  }
  return best === undefined || best.step === finalStep ? undefined : best.step;
}
