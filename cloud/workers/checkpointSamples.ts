/**
 * A job's samples on the worker: the first N eval prompts answered at checkpoint 0 (the base),
 * at each checkpoint and at the end, graded by the job's built-in graders, as the data of a
 * `samples.graded` event. Custom graders are functions in the user's trainer: their grades stay
 * null here and are filled by the process that runs that code (`svc start`, sdk/trainer/trainer.ts).
 */
import type { ChatExample } from "../../engine/data/chat-jsonl.js";
import type { SampleAnswerer } from "../../engine/infer/sampleAnswers.js";
import { builtInGrader, graderName, passRate, type GradedSample, type Grades, type JobGrader } from "../../sdk/trainer/graders.js";

/** Longest prompt and reference text an event carries (the answer is bounded by its tokens). */
const SHOWN_CHARS = 2000;

export interface SampleRow extends GradedSample {
  grades: Grades;
}

export interface SamplesGradedData {
  step: number;
  /** The job's grader names, in config order (the table's columns). */
  graders: string[];
  samples: SampleRow[];
  /** Share of graded samples that pass every grader that ran; null with none graded. */
  passRate: number | null;
  /** Seconds spent answering and grading, for the run's overhead. */
  seconds: number;
}

const clip = (text: string) => (text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text);

/** The eval rows that become samples: those ending in an assistant message (the reference), the first `count`. */
export function samplePrompts(evalSet: readonly ChatExample[], count: number): { messages: ChatExample["messages"]; prompt: string; reference: string }[] {
  const rows: { messages: ChatExample["messages"]; prompt: string; reference: string }[] = [];
  for (const example of evalSet) {
    if (rows.length >= count) break;
    const last = example.messages.at(-1);
    if (last?.role !== "assistant") continue;
    const messages = example.messages.slice(0, -1);
    const prompt = messages.findLast((m) => m.role === "user")?.content ?? "";
    rows.push({ messages, prompt, reference: last.content });
  }
  return rows;
}

export function checkpointSampler(options: {
  answerer: SampleAnswerer;
  evalSet: readonly ChatExample[];
  count: number;
  maxTokens: number;
  graders: readonly JobGrader[];
}): (step: number, adapterPath?: string) => Promise<SamplesGradedData> {
  const prompts = samplePrompts(options.evalSet, options.count);
  const builtIns = options.graders.map((g) => (g.type === "custom" ? null : builtInGrader(g)));
  const names = options.graders.map(graderName);
  return async (step, adapterPath) => {
    const started = performance.now();
    const answers = await options.answerer.answer(prompts, { adapterPath, maxTokens: options.maxTokens });
    const samples = prompts.map((p, i): SampleRow => {
      const graded = { prompt: p.prompt, reference: p.reference, answer: answers[i] };
      const grades: Grades = {};
      names.forEach((name, g) => {
        grades[name] = builtIns[g] ? builtIns[g](graded) : null;
      });
      return { prompt: clip(p.prompt), reference: clip(p.reference), answer: answers[i], grades };
    });
    return { step, graders: names, samples, passRate: passRate(samples), seconds: (performance.now() - started) / 1000 };
  };
}
