/**
 * The starter projects of `svc init --template <name>`: each is a folder under the package's
 * `templates/` (`src/svc/index.ts`, `data/train.jsonl`, `data/eval.jsonl`) that trains on svc-tiny
 * in well under a minute and visibly learns its task. Without a template, `svc init` writes the
 * small quickstart of cli/commands/init.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "../../sdk/packageRoot.js";

export const TEMPLATES = {
  "json-extraction": "a sentence about a person in, a JSON object of its facts out",
  classification: "a short review in, positive / negative / neutral out",
  translation: "an English noun phrase in, its French translation out",
} as const;
export type TemplateName = keyof typeof TEMPLATES;

/** The files every template has, relative to the project folder. */
export const TEMPLATE_FILES = ["src/svc/index.ts", "data/train.jsonl", "data/eval.jsonl"] as const;

export class UnknownTemplateError extends Error {
  constructor(readonly template: string) {
    super(`unknown template "${template}"; choose one of: ${templateNames().join(", ")} (or no --template for the quickstart)`);
  }
}

export function templateNames(): TemplateName[] {
  return Object.keys(TEMPLATES) as TemplateName[];
}

export function isTemplateName(name: string): name is TemplateName {
  return Object.hasOwn(TEMPLATES, name);
}

/** `--help` lines: one per template, name and what it learns. */
export function templateHelp(): string {
  const width = Math.max(...templateNames().map((n) => n.length));
  return templateNames()
    .map((n) => `  ${n.padEnd(width)}  ${TEMPLATES[n]}`)
    .join("\n");
}

/** The template's files as [relative path, content]; throws UnknownTemplateError before reading anything. */
export function templateFiles(name: string, root: string = packageRoot()): [string, string][] {
  if (!isTemplateName(name)) throw new UnknownTemplateError(name);
  return TEMPLATE_FILES.map((file) => [file, readFileSync(path.join(root, "templates", name, file), "utf8")]);
}
