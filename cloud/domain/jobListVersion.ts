/**
 * A version per project's job list (table `job_list_versions`, no row = 0), raised in the same
 * transaction as every change a `Job` shows: a job created, a status change. The job-list cache
 * (jobListCache.ts) compares it to tell whether the list it keeps is still current, and watchers
 * of the list (jobListChanges.ts) are told each new version.
 */
import type { Kysely, Transaction } from "kysely";
import type { CloudContext } from "../context.js";
import type { Database } from "../store/schema.js";

/**
 * Raises the job-list version of each project; call inside the transaction that made the change.
 * Returns each project's new version, for `ctx.jobListChanges.changed` once the transaction committed.
 */
export async function bumpJobListVersions(trx: Transaction<Database> | Kysely<Database>, projectIds: Iterable<string>): Promise<Map<string, number>> {
  const versions = new Map<string, number>();
  // Sorted, so concurrent transactions take the version rows' locks in one order (PostgreSQL).
  for (const projectId of [...new Set(projectIds)].sort()) {
    const row = await trx
      .insertInto("job_list_versions")
      .values({ project_id: projectId, version: 1 })
      .onConflict((oc) => oc.column("project_id").doUpdateSet((eb) => ({ version: eb("job_list_versions.version", "+", 1) })))
      .returning("version")
      .executeTakeFirstOrThrow();
    versions.set(projectId, Number(row.version));
  }
  return versions;
}

/** The entity tag of a project's job list at `version`: what `GET /v1/jobs` and its watch send. */
export function jobListEtag(projectId: string, version: number): string {
  return `"${projectId}.${version}"`;
}

export async function jobListVersion(ctx: CloudContext, projectId: string): Promise<number> {
  const row = await ctx.db.selectFrom("job_list_versions").select("version").where("project_id", "=", projectId).executeTakeFirst();
  return row ? Number(row.version) : 0;
}
