/**
 * A job's samples by step (table `job_samples`): written with the worker's `samples.graded`
 * event, in its transaction, and completed by the custom grades the trainer's own process posts.
 */
import type { Kysely, Transaction } from "kysely";
import type { SampleCheckpoint, SampleGrades } from "../../sdk/wire.js";
import { passRate } from "../../sdk/trainer/graders.js";
import type { CloudContext } from "../context.js";
import { badRequest, notFound } from "../http/errors.js";
import type { Database } from "../store/schema.js";
import { nowIso } from "./ids.js";

/** Stores (or replaces: a job claimed again answers its steps again) one step's samples. */
export async function storeSamples(trx: Transaction<Database> | Kysely<Database>, jobId: string, step: number, data: string, now: string): Promise<void> {
  await trx
    .insertInto("job_samples")
    .values({ job_id: jobId, step, data, created_at: now })
    .onConflict((oc) => oc.columns(["job_id", "step"]).doUpdateSet({ data, created_at: now }))
    .execute();
}

function toCheckpoint(step: number, data: string): SampleCheckpoint {
  const parsed = JSON.parse(data) as SampleCheckpoint;
  return { step, graders: parsed.graders ?? [], samples: parsed.samples ?? [], passRate: parsed.passRate ?? null, seconds: parsed.seconds ?? 0 };
}

export async function listJobSamples(ctx: CloudContext, jobId: string): Promise<SampleCheckpoint[]> {
  const rows = await ctx.db.selectFrom("job_samples").select(["step", "data"]).where("job_id", "=", jobId).orderBy("step").execute();
  return rows.map((row) => toCheckpoint(Number(row.step), row.data));
}

/**
 * Merges a custom grader's grades into one step's samples and recomputes its pass rate. Only
 * graders the job config names as custom are taken (a built-in's grades are the worker's), one
 * grade per sample.
 */
export async function gradeJobSamples(
  ctx: CloudContext,
  jobId: string,
  config: Record<string, unknown>,
  step: number,
  grades: SampleGrades,
): Promise<SampleCheckpoint> {
  const custom = new Set(
    (Array.isArray(config.graders) ? (config.graders as { type?: unknown; name?: unknown }[]) : [])
      .filter((g) => g.type === "custom")
      .map((g) => String(g.name)),
  );
  for (const name of Object.keys(grades)) if (!custom.has(name)) throw badRequest(`grades: "${name}" is not a custom grader of this job`);
  return ctx.db.transaction().execute(async (trx) => {
    let select = trx.selectFrom("job_samples").select("data").where("job_id", "=", jobId).where("step", "=", step);
    if (ctx.dialect === "postgres") select = select.forUpdate();
    const row = await select.executeTakeFirst();
    if (!row) throw notFound(`samples at step ${step} of job ${jobId}`);
    const checkpoint = toCheckpoint(step, row.data);
    for (const [name, values] of Object.entries(grades)) {
      if (values.length !== checkpoint.samples.length)
        throw badRequest(`grades: "${name}" has ${values.length} grades for ${checkpoint.samples.length} samples`);
      checkpoint.samples.forEach((sample, i) => {
        sample.grades[name] = values[i];
      });
    }
    checkpoint.passRate = passRate(checkpoint.samples);
    const { step: _step, ...data } = checkpoint;
    await storeSamples(trx, jobId, step, JSON.stringify({ step, ...data }), nowIso());
    return checkpoint;
  });
}
