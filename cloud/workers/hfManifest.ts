/**
 * The files of a Hugging Face model's folder that a worker fetches to train from its safetensors,
 * each by size and sha256 (the `hfFiles` of an assignment's model). The cloud lists them, serves
 * them one by one under these names, and the worker checks the list before it writes anything:
 * a name is a plain file name (no folders, no `..`), so a list cannot steer a write elsewhere.
 */
import { createHash } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { TypeCompiler } from "@sinclair/typebox/compiler";

export const HfFile = T.Object({
  name: T.String({ minLength: 1, maxLength: 200 }),
  bytes: T.Integer({ minimum: 0 }),
  sha256: T.String({ pattern: "^[0-9a-f]{64}$" }),
});
export type HfFile = Static<typeof HfFile>;

export const HfFiles = T.Object({
  /** Where each file is served: this URL followed by its name, URL-encoded. */
  url: T.String({ minLength: 1, maxLength: 2000 }),
  files: T.Array(HfFile, { minItems: 1, maxItems: 1000 }),
});
export type HfFiles = Static<typeof HfFiles>;

/** What transformers reads to load the model and its tokenizer; the rest of a folder (README, pickles, ONNX) stays behind. */
const SHIPPED =
  /^(config\.json|generation_config\.json|tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|tokenizer\.model|chat_template\.jinja|[^/\\]+\.safetensors(\.index\.json)?)$/;

export function isShippedHfFile(name: string): boolean {
  return hfFileNameProblem(name) === null && SHIPPED.test(name);
}

/** Why `name` is not a plain file name of a folder, or null when it is. */
export function hfFileNameProblem(name: string): string | null {
  if (name === "" || name === "." || name === "..") return `"${name}" is not a file name`;
  if (/[/\\]/.test(name)) return `"${name}" names a folder (it has a path separator)`;
  if (/^[A-Za-z]:/.test(name)) return `"${name}" is an absolute path`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) return `"${name}" is not a plain file name (letters, digits, '.', '_' and '-', not starting with '.')`;
  return null;
}

const check = TypeCompiler.Compile(HfFiles);

/** The list as sent, or one line saying what is wrong with it (the first field, or a name that would leave the folder). */
export function parseHfFiles(value: unknown): { hfFiles: HfFiles } | { error: string } {
  if (!check.Check(value)) {
    const first = check.Errors(value).First();
    const field = first?.path.replace(/^\//, "").replace(/\//g, ".") || "hfFiles";
    return { error: `hfFiles: ${field} ${first?.message ?? "is invalid"}` };
  }
  const seen = new Set<string>();
  for (const file of value.files) {
    const problem = hfFileNameProblem(file.name);
    if (problem) return { error: `hfFiles: ${problem}` };
    if (seen.has(file.name)) return { error: `hfFiles: "${file.name}" is listed twice` };
    seen.add(file.name);
  }
  if (!seen.has("config.json")) return { error: "hfFiles: the list has no config.json" };
  if (![...seen].some((name) => name.endsWith(".safetensors"))) return { error: "hfFiles: the list has no *.safetensors weights" };
  return { hfFiles: value };
}

/** The name of a worker's copy of these files: the sha256 of the list itself, so other content is another copy. */
export function hfCopyName(files: readonly HfFile[]): string {
  const lines = [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((file) => `${file.sha256} ${file.bytes} ${file.name}\n`)
    .join("");
  return `hf-${createHash("sha256").update(lines).digest("hex")}`;
}
