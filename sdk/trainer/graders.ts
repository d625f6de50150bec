/**
 * Graders: how a sample answer (the model's reply to an eval prompt at a checkpoint) is judged
 * against the eval row's reference answer. The built-in ones are data, so they travel in the
 * job's config and run on the worker beside the generation; a custom one is a function in the
 * user's trainer code, which exists only in the process that runs that code (`svc start`, which
 * follows the job): the job config names it (`{ type: "custom", name }`) and that process grades
 * each checkpoint's answers when their event arrives and posts the grades to the cloud.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { BUILT_IN_GRADERS, GRADER_NAME_PATTERN } from "../api/jobConfig.js";

/** A bad field and what it must be (config.ts's ConfigProblem; declared here so the two files do not import each other). */
interface ConfigProblem {
  field: string;
  message: string;
}

/** What a grader judges: the prompt's last user message, the reference (the eval row's last assistant message), and the answer. */
export interface GradedSample {
  prompt: string;
  reference: string;
  answer: string;
}

/** A grader written in the trainer: `{ name: "polite", grade: ({ answer }) => answer.includes("please") }`. */
export interface CustomGrader {
  name: string;
  grade: (sample: GradedSample) => boolean | Promise<boolean>;
}

/** A built-in grader, as the job config carries it. */
export type BuiltInGrader =
  /** The answer equals the reference (both trimmed). */
  | { type: "exact" }
  /** The answer contains the reference (trimmed). */
  | { type: "contains" }
  /** The answer matches `pattern` (a JavaScript regular expression, `flags` as in `new RegExp`). */
  | { type: "regex"; pattern: string; flags?: string }
  /** The answer parses as JSON. */
  | { type: "json_valid" }
  /** The answer parses as JSON and satisfies `schema` (JSON Schema, draft 2020-12 subset Ajv checks). */
  | { type: "json_schema"; schema: Record<string, unknown> };

/** Each grader of a trainer: a built-in by name (`"exact"`), a built-in with its settings, or a custom function. */
export type GraderConfig = "exact" | "contains" | "json_valid" | BuiltInGrader | CustomGrader;

/** A grader in the job's config: the built-ins whole, a custom one by name (its function stays with the trainer). */
export type JobGrader = BuiltInGrader | { type: "custom"; name: string };

/** How many eval prompts are answered at each checkpoint, and how long an answer may get. */
export interface SamplesConfig {
  /** The first `count` eval prompts (default 8; 0 turns samples off), 0 to 64. */
  count?: number;
  /** Longest answer in tokens (default 128), 1 to 2048. Answers are greedy. */
  maxTokens?: number;
}

export const DEFAULT_SAMPLES = { count: 8, maxTokens: 128 } as const;
const NAME = new RegExp(GRADER_NAME_PATTERN);

/** The column name of a grader in tables and in a sample's grades. */
export function graderName(grader: JobGrader): string {
  return grader.type === "custom" ? grader.name : grader.type;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  return new Ajv({ allErrors: false, strict: false }).compile(schema);
}

/** Problems of a `graders` list as createTrainer (functions allowed) or the cloud (job config) receives it; fields are `graders[i]`. */
export function graderProblems(graders: unknown, options: { functions: boolean }): ConfigProblem[] {
  if (!Array.isArray(graders)) return [{ field: "graders", message: "must be an array" }];
  const problems: ConfigProblem[] = [];
  const names = new Set<string>();
  graders.forEach((raw, i) => {
    const field = `graders[${i}]`;
    const fail = (message: string) => problems.push({ field, message });
    const grader = typeof raw === "string" ? { type: raw } : raw;
    if (options.functions && isObject(grader) && typeof grader.grade === "function") {
      if (typeof grader.name !== "string" || !NAME.test(grader.name)) return fail("needs a name: 1 to 40 letters, digits, _ . or -");
      if ((BUILT_IN_GRADERS as readonly string[]).includes(grader.name)) return fail(`is named "${grader.name}", a built-in grader's name; choose another`);
      if (names.has(grader.name)) return fail(`repeats the name "${grader.name}"`);
      names.add(grader.name);
      return;
    }
    if (!isObject(grader)) return fail(`must be one of ${BUILT_IN_GRADERS.join(", ")}, an object { type, ... }, or { name, grade(sample) }`);
    if (grader.type === "custom" && !options.functions) {
      if (typeof grader.name !== "string" || !NAME.test(grader.name)) return fail("needs a name: 1 to 40 letters, digits, _ . or -");
      names.add(grader.name);
      return;
    }
    if (!(BUILT_IN_GRADERS as readonly unknown[]).includes(grader.type))
      return fail(
        `has type ${JSON.stringify(grader.type)}; choose from ${BUILT_IN_GRADERS.join(", ")}${options.functions ? ", or give { name, grade(sample) }" : ""}`,
      );
    const name = String(grader.type);
    if (names.has(name)) return fail(`repeats the grader "${name}"`);
    names.add(name);
    if (grader.type === "regex") {
      if (typeof grader.pattern !== "string") return fail("needs a pattern (a string)");
      try {
        new RegExp(grader.pattern, typeof grader.flags === "string" ? grader.flags : undefined);
      } catch (err) {
        return fail(`has a pattern that is not a regular expression: ${(err as Error).message}`);
      }
    }
    if (grader.type === "json_schema") {
      if (!isObject(grader.schema)) return fail("needs a schema (a JSON Schema object)");
      try {
        compileSchema(grader.schema);
      } catch (err) {
        return fail(`has a schema that is not valid JSON Schema: ${(err as Error).message}`);
      }
    }
  });
  return problems;
}

/** The job config's form of checked graders: built-ins as objects, custom ones by name. */
export function toJobGraders(graders: readonly GraderConfig[]): JobGrader[] {
  return graders.map((grader) => {
    if (typeof grader === "string") return { type: grader };
    if ("grade" in grader) return { type: "custom", name: grader.name };
    return grader;
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A built-in grader ready to judge answers (its regex or schema compiled once). */
export function builtInGrader(grader: BuiltInGrader): (sample: GradedSample) => boolean {
  switch (grader.type) {
    case "exact":
      return ({ answer, reference }) => answer.trim() === reference.trim();
    case "contains":
      return ({ answer, reference }) => answer.includes(reference.trim());
    case "regex": {
      const pattern = new RegExp(grader.pattern, grader.flags);
      // A global or sticky pattern keeps lastIndex between tests; each answer starts fresh.
      return ({ answer }) => {
        pattern.lastIndex = 0;
        return pattern.test(answer);
      };
    }
    case "json_valid":
      return ({ answer }) => parseJson(answer).ok;
    case "json_schema": {
      const validate = compileSchema(grader.schema);
      return ({ answer }) => {
        const parsed = parseJson(answer);
        return parsed.ok && validate(parsed.value) === true;
      };
    }
  }
}

/** A sample's grades by grader name: true or false, or null for a custom grader not yet run (or that threw). */
export type Grades = Record<string, boolean | null>;

/** Whether a sample passes: every grader that ran said yes (null grades are not counted); false with no grades. */
export function samplePasses(grades: Grades): boolean {
  const values = Object.values(grades).filter((v): v is boolean => v !== null);
  return values.length > 0 && values.every(Boolean);
}

/** The share of samples that pass, or null when none has a grade. */
export function passRate(samples: readonly { grades: Grades }[]): number | null {
  const graded = samples.filter((s) => Object.values(s.grades).some((v) => v !== null));
  if (graded.length === 0) return null;
  return graded.filter((s) => samplePasses(s.grades)).length / graded.length;
}
