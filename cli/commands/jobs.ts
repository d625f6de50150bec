/** `svc jobs list|cancel|delete`: the project's training jobs, from the terminal. */
import { createInterface } from "node:readline";
import { formatBytes } from "../../sdk/modelFacts.js";
import { ProjectSession } from "../../sdk/session.js";
import type { CloudClient } from "../../sdk/client.js";
import type { Job } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";
import { formatTable } from "../table.js";

const USAGE = `svc jobs list [--json]
svc jobs cancel JOB-ID
svc jobs delete JOB-ID [--yes]

list      the project's jobs, newest first
cancel    stops a queued or running job
delete    deletes an ended job with its events, its artifacts (adapters, checkpoints) and the
          datasets no other job uses; asks first unless --yes. A queued or running job must be
          cancelled first; a job a deployment serves is kept until the deployment is deleted.`;

export const jobsCommand: Command = {
  ...listed("jobs"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" }, yes: { type: "boolean", short: "y" } }, USAGE);
    const [sub, jobId, extra] = positionals;
    if (values.help || !sub) {
      process.stdout.write(USAGE + "\n");
      return sub || values.help ? 0 : 2;
    }
    if (extra !== undefined) throw new CliError(`unexpected argument "${extra}"\nusage: ${USAGE.split("\n")[0]}`, 2);
    const client = await projectClient();
    switch (sub) {
      case "list":
        return listJobs(client, Boolean(values.json));
      case "cancel": {
        const job = await client.cancelJob(requireJobId(jobId, sub));
        process.stdout.write(`job ${job.id} (${job.name}) is ${job.status}\n`);
        return 0;
      }
      case "delete":
        return deleteJob(client, requireJobId(jobId, sub), Boolean(values.yes));
      default:
        throw new CliError(`unknown subcommand "jobs ${sub}"\nusage: svc jobs <list|cancel|delete>`, 2);
    }
  },
};

/** Scoped to the project of this folder when it has one; a job id alone is found among all of the user's projects. */
async function projectClient(): Promise<CloudClient> {
  const session = await ProjectSession.open({ projectDir: process.cwd() });
  const state = await session.state();
  return session.client(state?.projectId);
}

function requireJobId(jobId: string | undefined, sub: string): string {
  if (!jobId) throw new CliError(`svc jobs ${sub} needs a job id (svc jobs list shows them)`, 2);
  return jobId;
}

async function listJobs(client: CloudClient, json: boolean): Promise<number> {
  if (!client.projectId) throw new CliError("no project in this folder: run svc jobs list in a project (svc init makes one)");
  const jobs = await client.listJobs();
  if (json) process.stdout.write(JSON.stringify(jobs) + "\n");
  else if (jobs.length === 0) process.stdout.write("no jobs yet (svc start trains one)\n");
  else
    process.stdout.write(
      formatTable(
        ["ID", "NAME", "STATUS", "CREATED"],
        jobs.map((j) => [j.id, j.name, j.status, j.createdAt]),
      ),
    );
  return 0;
}

async function deleteJob(client: CloudClient, jobId: string, yes: boolean): Promise<number> {
  const job = await client.getJob(jobId);
  if (!yes && !(await confirm(`Delete job "${job.name}" (${job.id}, ${job.status}) with ${describeContents(job)}? This cannot be undone. [y/N] `))) {
    process.stdout.write("not deleted\n");
    return 1;
  }
  await client.deleteJob(job.id);
  process.stdout.write(`deleted job ${job.id} (${job.name})${job.diskBytes ? `, freed up to ${formatBytes(job.diskBytes)}` : ""}\n`);
  return 0;
}

function describeContents(job: Job): string {
  const artifacts = `${job.artifactCount} artifact${job.artifactCount === 1 ? "" : "s"}`;
  return `its events, ${artifacts} and the datasets no other job uses${job.diskBytes ? ` (${formatBytes(job.diskBytes)} on disk)` : ""}`;
}

/** Asks on the terminal (or whatever feeds stdin); anything but y/yes, or no answer at all, is a no. */
function confirm(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: false });
    process.stdout.write(question);
    let answered = false;
    lines.once("line", (answer) => {
      answered = true;
      lines.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
    lines.once("close", () => {
      if (!answered) {
        process.stdout.write("\n");
        resolve(false);
      }
    });
  });
}
