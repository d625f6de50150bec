/** `svc build`, `svc manifest`, `svc start`: the project's trainer, from source to a finished job. */
import { Console } from "node:console";
import path from "node:path";
import { logMessage } from "../../sdk/logMessage.js";
import type { Job } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";
import { buildTrainerBundle } from "../project/bundle.js";
import { loadTrainer, manifestText } from "../project/manifest.js";
import type { Trainer } from "../../sdk/trainer/trainer.js";
import { changedBuildSources } from "../../sdk/buildFreshness.js";
import { staleBuildText } from "../../sdk/manifest.js";
import { dryRunJsonLines, dryRunText } from "../../sdk/trainer/dryRunReport.js";
import { onStopRequest, type StopRequest } from "../../sdk/platform/stop.js";

export const buildCommand: Command = {
  ...listed("build"),
  usage: "svc build",
  async run(argv) {
    const { values } = parse(argv, {}, this.usage);
    if (values.help) return help(this);
    const out = await buildTrainerBundle(process.cwd()).catch((err) => {
      throw new CliError(`build failed: ${(err as Error).message}`);
    });
    process.stdout.write(`built ${path.relative(process.cwd(), out)}\n`);
    return 0;
  },
};

export const manifestCommand: Command = {
  ...listed("manifest"),
  usage: "svc manifest [--json] [--rebuild]",
  async run(argv) {
    const { values } = parse(argv, { json: { type: "boolean" }, rebuild: { type: "boolean" } }, this.usage);
    if (values.help) return help(this);
    const { manifest } = await loadTrainer(process.cwd(), { rebuild: Boolean(values.rebuild) });
    process.stdout.write((values.json ? JSON.stringify(manifest) : manifestText(manifest)) + "\n");
    return manifest.status === "error" ? 1 : 0;
  },
};

export const startCommand: Command = {
  ...listed("start"),
  usage: "svc start [--json] [--rebuild] [--dry-run [--model-file FILE.gguf] [--preview]]",
  async run(argv) {
    const { values } = parse(
      argv,
      {
        json: { type: "boolean" },
        rebuild: { type: "boolean" },
        "dry-run": { type: "boolean" },
        "model-file": { type: "string" },
        preview: { type: "boolean" },
      },
      this.usage,
    );
    if (values.help) return help(this);
    const json = Boolean(values.json);
    // The trainer's code runs in this process: its console.log must not land between JSON lines.
    if (json) globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
    if (!values.rebuild) warnIfStale(process.cwd());
    const { manifest, trainer } = await loadTrainer(process.cwd(), { rebuild: Boolean(values.rebuild) });
    if (!trainer) throw new CliError(manifestText(manifest));
    if (values["dry-run"] || trainer.isDryRun) return printDryRun(trainer, { json, modelFile: values["model-file"], preview: Boolean(values.preview) });
    if (values["model-file"] !== undefined) throw new CliError("--model-file goes with --dry-run", 2);
    if (values.preview) throw new CliError("--preview goes with --dry-run", 2);
    return train(trainer, json);
  },
};

/**
 * `svc start --dry-run`: the report, as lines or JSON lines; exit 1 when the data is not trainable. `--preview` adds
 * each dataset's first conversations and every conversation's length, and times no steps (the studio's Datasets view).
 */
async function printDryRun(trainer: Trainer, options: { json: boolean; modelFile?: string; preview: boolean }): Promise<number> {
  if (!options.json)
    process.stdout.write(`checking "${trainer.name}": validating, tokenizing${options.preview ? "" : " and timing a few steps"} on this machine...\n`);
  let report;
  try {
    report = await trainer.dryRun({ modelFile: options.modelFile, preview: options.preview });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
  const lines = options.json ? dryRunJsonLines(report) : dryRunText(report);
  process.stdout.write(lines.join("\n") + "\n");
  return report.ok ? 0 : 1;
}

async function train(trainer: Trainer, json: boolean): Promise<number> {
  // Ctrl-C (or the studio's Stop: a drain request, sdk/platform/stop.ts) cancels the job; the worker stops within a second; a
  // second Ctrl-C exits at once. Listening from the start: a signal while the datasets upload
  // stops before the job is created, and one while it is being created cancels it once it exists,
  // so no job trains with nobody watching.
  let job: Job | undefined;
  let interrupted = false;
  const beforeJob = new AbortController();
  // SIGTERM is a program's stop (the studio's Stop button), where "Ctrl-C again" means nothing.
  let hint = " (Ctrl-C again to exit now)";
  const cancel = (created: Job) => {
    process.stderr.write(`svc: cancelling the job${hint}\n`);
    trainer.cancel().catch((err: unknown) => {
      // The cloud is down (or refused): waiting on would only retry its event stream, and the
      // user asked to stop, so say what happened in one line and leave.
      process.stderr.write(`svc: couldn't cancel job ${created.id}: ${(err as Error).message}\n`);
      process.exit(130);
    });
  };
  const onSignal = (how: StopRequest) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    // Only a Ctrl-C can be pressed again; the studio's Stop (a drain request or SIGTERM) cannot.
    if (how !== "SIGINT") hint = "";
    if (job) cancel(job);
    else {
      process.stderr.write(`svc: stopping before the job is created${hint}\n`);
      beforeJob.abort();
    }
  };
  const stopListening = onStopRequest(onSignal);
  try {
    try {
      job = await trainer.start({ signal: beforeJob.signal });
    } catch (err) {
      // By name: the trainer's SDK is the project bundle's import of dist/sdk.mjs, not this module.
      if ((err as Error).name === "TrainerStoppedError") throw new CliError(`stopped: ${(err as Error).message}`, 130);
      throw new CliError((err as Error).message);
    }
    if (!json) process.stdout.write(`job ${job.id} queued: ${job.name}\n`);
    if (interrupted) cancel(job);
    const final = await trainer.wait({
      onEvent: (event) => {
        process.stdout.write(
          (json ? JSON.stringify({ id: event.seq, event: event.type, data: event.data }) : logMessage(event.type, event.data, { accuracies: true })) + "\n",
        );
      },
    });
    if (!json) process.stdout.write(`job ${final.id} ${final.status}\n`);
    if (final.status === "completed") return 0;
    return interrupted ? 130 : 1;
  } finally {
    stopListening();
  }
}

/** The bundle is reused as it is (SPEC section 4): one line when it is older than its sources, so no edit is ignored unseen. */
function warnIfStale(projectDir: string): void {
  const changed = changedBuildSources(projectDir);
  if (changed?.length) process.stderr.write(`svc: ${staleBuildText(changed)} Run \`svc start --rebuild\` to train your edits.\n`);
}

function help(command: Command): number {
  process.stdout.write(`usage: ${command.usage}\n\n${command.summary}\n`);
  return 0;
}
