#!/usr/bin/env node
/** The `svc` command: dispatches to one module per command. */
import type { Command } from "./command.js";
import { COMMAND_SUMMARIES, type CommandName } from "./commandSummaries.js";
import { printError } from "./output.js";

/**
 * Each command's module, imported only when it runs: `svc --help`, `svc keys` or a worker then start
 * without the cloud's server and store, or the tfjs engine, that they never use.
 */
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  init: async () => (await import("./commands/init.js")).initCommand,
  dev: async () => (await import("./commands/dev.js")).devCommand,
  start: async () => (await import("./commands/project.js")).startCommand,
  build: async () => (await import("./commands/project.js")).buildCommand,
  manifest: async () => (await import("./commands/project.js")).manifestCommand,
  jobs: async () => (await import("./commands/jobs.js")).jobsCommand,
  export: async () => (await import("./commands/export.js")).exportCommand,
  keys: async () => (await import("./commands/keys.js")).keysCommand,
  models: async () => (await import("./commands/models.js")).modelsCommand,
  setup: async () => (await import("./commands/setup.js")).setupCommand,
  cloud: async () => (await import("./commands/cloud.js")).cloudCommand,
  worker: async () => (await import("./commands/worker.js")).workerCommand,
  workers: async () => (await import("./commands/workers.js")).workersCommand,
  login: async () => (await import("./commands/auth.js")).loginCommand,
  logout: async () => (await import("./commands/auth.js")).logoutCommand,
  whoami: async () => (await import("./commands/auth.js")).whoamiCommand,
};

function help(): string {
  const summaries = Object.entries(COMMAND_SUMMARIES);
  const width = Math.max(...summaries.map(([name]) => name.length));
  return [
    "svc — fine-tune language-model adapters locally and serve them behind OpenAI-compatible endpoints",
    "",
    "usage: svc <command> [options]",
    "",
    ...summaries.map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`),
    "",
    "Run `svc <command> --help` for a command's options.",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(help() + "\n");
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v") {
    const { packageVersion } = await import("./version.js");
    process.stdout.write(packageVersion() + "\n");
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    process.stderr.write(`svc: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }
  return (await COMMANDS[name as CommandName]()).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = printError(err);
  },
);
