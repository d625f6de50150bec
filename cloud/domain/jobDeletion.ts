/**
 * Deleting a job: its events, its artifacts (rows and files) and the datasets no other job uses.
 * A job that has not ended is refused (cancel it first): a worker may still be writing its
 * artifacts. A job a deployment serves (its final adapter or a checkpoint) is refused, naming the
 * deployment: deleting it would take an endpoint down. Rows go in one transaction, files after it
 * commits, so a crash in between leaves orphan files, never a row pointing at a missing file.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Transaction } from "kysely";
import type { CloudContext } from "../context.js";
import { conflict } from "../http/errors.js";
import type { Database, JobsTable } from "../store/schema.js";
import { bumpJobListVersions } from "./jobListVersion.js";
import { isTerminal } from "./jobState.js";

/** Deletes an ended job and what only it uses; throws 409 for a live job or one a deployment serves. */
export async function deleteJob(ctx: CloudContext, jobId: string): Promise<void> {
  const { files, versions } = await ctx.db.transaction().execute(async (trx) => {
    // Read inside the transaction: the job may have been claimed or deployed since the caller looked.
    const job = await trx.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirst();
    if (!job) return { files: [], versions: new Map<string, number>() };
    if (!isTerminal(job.status)) {
      throw conflict("job_active", `job ${job.id} is ${job.status}; cancel it first (svc jobs cancel ${job.id}), then delete it`);
    }
    const serving = await servingDeployments(trx, job.id);
    if (serving.length > 0) {
      const names = serving.map((slug) => `"${slug}"`).join(", ");
      const what = serving.length === 1 ? `deployment ${names}` : `deployments ${names}`;
      throw conflict(
        "job_deployed",
        `job ${job.id} is served by ${what}; delete ${serving.length === 1 ? "it" : "them"} or point ${serving.length === 1 ? "it" : "them"} at another target first`,
      );
    }
    return removeRows(trx, job);
  });
  ctx.jobListChanges.changed(versions);
  await removeFiles(ctx, jobId, files);
}

/** The slugs of the live deployments (deleted ones keep their rows) that serve one of the job's adapters. */
async function servingDeployments(trx: Transaction<Database>, jobId: string): Promise<string[]> {
  const rows = await trx.selectFrom("deployments").select("slug").where("target_job_id", "=", jobId).where("deleted_at", "is", null).orderBy("slug").execute();
  return rows.map((row) => row.slug);
}

async function removeRows(trx: Transaction<Database>, job: JobsTable): Promise<{ files: string[]; versions: Map<string, number> }> {
  const artifacts = await trx.selectFrom("artifacts").select("path").where("job_id", "=", job.id).execute();
  await trx.deleteFrom("job_events").where("job_id", "=", job.id).execute();
  await trx.deleteFrom("job_samples").where("job_id", "=", job.id).execute();
  await trx.deleteFrom("artifacts").where("job_id", "=", job.id).execute();
  await trx.deleteFrom("jobs").where("id", "=", job.id).execute();
  const files = artifacts.map((row) => row.path);
  for (const datasetId of new Set([job.dataset_id, job.eval_dataset_id].filter((id): id is string => id !== null))) {
    const user = await trx
      .selectFrom("jobs")
      .select("id")
      .where((eb) => eb.or([eb("dataset_id", "=", datasetId), eb("eval_dataset_id", "=", datasetId)]))
      .limit(1)
      .executeTakeFirst();
    if (user) continue;
    const dataset = await trx.deleteFrom("datasets").where("id", "=", datasetId).returning("path").executeTakeFirst();
    if (dataset) files.push(dataset.path);
  }
  return { files, versions: await bumpJobListVersions(trx, [job.project_id]) };
}

async function removeFiles(ctx: CloudContext, jobId: string, files: string[]): Promise<void> {
  await Promise.all(files.map((file) => fs.rm(file, { force: true })));
  // The job's artifact folder, with any upload part a cancelled worker left behind.
  await fs.rm(path.join(ctx.dataDir, "artifacts", jobId), { recursive: true, force: true });
}

/** Bytes the job keeps on the cloud's disk: its artifacts and its datasets (a dataset jobs share counts for each). */
export async function jobDiskBytes(ctx: CloudContext, job: JobsTable): Promise<number> {
  const artifacts = await ctx.db
    .selectFrom("artifacts")
    .select((eb) => eb.fn.sum<string | number | null>("size_bytes").as("total"))
    .where("job_id", "=", job.id)
    .executeTakeFirst();
  const datasetIds = [...new Set([job.dataset_id, job.eval_dataset_id].filter((id): id is string => id !== null))];
  const datasets = datasetIds.length === 0 ? [] : await ctx.db.selectFrom("datasets").select("size_bytes").where("id", "in", datasetIds).execute();
  return Number(artifacts?.total ?? 0) + datasets.reduce((sum, row) => sum + Number(row.size_bytes), 0);
}
