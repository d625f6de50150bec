/**
 * Every `svc` command's name and one-line summary, in the order `svc --help` lists them. The
 * commands' code is elsewhere and loaded only when one runs (main.ts), so this file imports nothing.
 */
import type { Command } from "./command.js";

export const COMMAND_SUMMARIES = {
  init: "create src/svc/index.ts and sample data in this folder (--template for a starter project)",
  dev: "run the studio for this project in your browser",
  start: "train the project's registered trainer and stream its log (--dry-run: check and estimate, train nothing; --preview: show the datasets, time nothing)",
  build: "bundle src/svc/index.ts into .svc/build/index.mjs",
  manifest: "show the project's registered trainer (--json for tools)",
  jobs: "list, cancel or delete the project's training jobs",
  export: "write a job's model as a merged GGUF, for Ollama or LM Studio, or as PEFT files",
  keys: "issue, limit, rotate and revoke an endpoint's API keys; export their usage",
  models: "list, discover or register base models",
  setup: "install the torch backend's Python packages (svc setup torch)",
  cloud: "run or manage the embedded cloud (control plane, edge, workers)",
  worker: "run a training worker for a cloud (local or remote)",
  workers: "list the training workers linked to the cloud and their devices",
  login: "sign in to the svc cloud (OAuth device flow, approved by the cloud's owner)",
  logout: "sign out: revoke the OAuth tokens and delete the credentials file",
  whoami: "show who is signed in, your orgs and projects, and this folder's project",
} as const;

export type CommandName = keyof typeof COMMAND_SUMMARIES;

/** A command's name and summary, for its module's Command. */
export function listed(name: CommandName): Pick<Command, "name" | "summary"> {
  return { name, summary: COMMAND_SUMMARIES[name] };
}
