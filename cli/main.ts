#!/usr/bin/env node
/** The `svc` command: dispatches to one module per command. */
import { cloudCommand } from "./commands/cloud.js";
import { devCommand } from "./commands/dev.js";
import { loginCommand, logoutCommand, whoamiCommand } from "./commands/auth.js";
import { buildCommand, manifestCommand, startCommand } from "./commands/project.js";
import { modelsCommand } from "./commands/models.js";
import { setupCommand } from "./commands/setup.js";
import { workerCommand } from "./commands/worker.js";
import { workersCommand } from "./commands/workers.js";
import { initCommand } from "./commands/init.js";
import { jobsCommand } from "./commands/jobs.js";
import { exportCommand } from "./commands/export.js";
import { keysCommand } from "./commands/keys.js";
import type { Command } from "./command.js";
import { printError } from "./output.js";

const COMMANDS: Command[] = [
  initCommand,
  devCommand,
  startCommand,
  buildCommand,
  manifestCommand,
  jobsCommand,
  exportCommand,
  keysCommand,
  modelsCommand,
  setupCommand,
  cloudCommand,
  workerCommand,
  workersCommand,
  loginCommand,
  logoutCommand,
  whoamiCommand,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "svc — fine-tune language-model adapters locally and serve them behind OpenAI-compatible endpoints",
    "",
    "usage: svc <command> [options]",
    "",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
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
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`svc: unknown command "${name}"\n\n${help()}\n`);
    return 2;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = printError(err);
  },
);
