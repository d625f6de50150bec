/** Artifacts a worker uploaded for a job: checkpoint adapters and the final adapter. */
import type { Artifact } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import type { ArtifactsTable } from "../store/schema.js";

export async function listArtifacts(ctx: CloudContext, jobId: string): Promise<Artifact[]> {
  const rows = await ctx.db.selectFrom("artifacts").selectAll().where("job_id", "=", jobId).orderBy("step").orderBy("name").execute();
  return rows.map(toArtifact);
}

export function toArtifact(row: ArtifactsTable): Artifact {
  return {
    id: row.id,
    jobId: row.job_id,
    kind: row.kind as Artifact["kind"],
    step: Number(row.step),
    name: row.name,
    sizeBytes: Number(row.size_bytes),
    createdAt: row.created_at,
  };
}
