/**
 * The job config's rules live once, in the contract (sdk/api/jobConfig.ts): the API's types are read from that schema,
 * and the checker createTrainer, the cloud and the worker share (jobConfigProblems) applies its rules and its words.
 */
import assert from "node:assert/strict";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { JobConfig, JobGrader } from "../../../sdk/api/jobConfig.js";
import { jobsApi, type CreateJobInput, type Job } from "../../../sdk/api/jobs.js";
import { jobConfigProblems, validateTrainerConfig, type TrainerConfig } from "../../../sdk/trainer/config.js";
import { graderProblems, toJobGraders } from "../../../sdk/trainer/graders.js";

const base: TrainerConfig = { name: "run", model: "svc-tiny", dataset: "data/train.jsonl", maxSteps: 10 };
const withEval: TrainerConfig = { ...base, evalDataset: "data/eval.jsonl", evalSteps: 5 };

/** A property's rule as the contract words it; `{value}` is the value given. */
const ruleOf = (schema: TSchema, value: unknown) => String(schema.errorMessage).replace("{value}", JSON.stringify(value));

describe("job config: the contract's schema is the rule set the trainer, the cloud and the worker apply", () => {
  it("the API types a job's config by the contract's schema", () => {
    assert.equal(jobsApi.getJob.response.properties.config, JobConfig, "Job.config is the contract's JobConfig");
    const sent: CreateJobInput["config"] = validateTrainerConfig({ ...withEval, graders: ["json_valid", { type: "regex", pattern: "^a" }] });
    const stored: Job["config"] = sent;
    assert.ok(Value.Check(JobConfig, stored), "what createTrainer sends is a JobConfig");
    // @ts-expect-error: `epochs` is no field of a job config, so a client cannot send it.
    const misspelt: CreateJobInput["config"] = { maxSteps: 1, epochs: 2 };
    assert.ok(misspelt);
  });

  it("each field's rule and message is the contract's", () => {
    const fields = Object.entries(JobConfig.properties as Record<string, TSchema>).filter(([field]) => field !== "graders");
    assert.ok(fields.length >= 19, `${fields.length} fields`);
    for (const [field, schema] of fields) {
      // How long a run is, is the one rule across fields: a config of the field alone, or of maxSteps and it.
      const length = field === "maxSteps" || field === "numTrainEpochs" ? {} : { maxSteps: 1 };
      for (const value of [null, [7], "x".repeat(121)]) {
        if (Value.Check(schema, value)) continue;
        assert.deepEqual(jobConfigProblems({ ...length, [field]: value }), [{ field, message: ruleOf(schema, value) }], `${field}: ${JSON.stringify(value)}`);
      }
    }
    const nested = { lora: { r: 0, alpha: 0, targetModules: ["wq"] }, earlyStopping: { patience: 0, metric: "loss" }, samples: { count: 65, maxTokens: 0 } };
    const problems = jobConfigProblems({ maxSteps: 1, ...nested });
    const properties = (path: string[]) => path.reduce<TSchema>((schema, key) => (schema.properties as Record<string, TSchema>)[key], JobConfig);
    assert.deepEqual(
      problems,
      Object.entries(nested).flatMap(([parent, values]) =>
        Object.entries(values).map(([child, value]) => {
          const schema = properties([parent, child]);
          const rule = schema.type === "array" ? (schema.items as TSchema) : schema;
          return { field: `${parent}.${child}`, message: ruleOf(rule, Array.isArray(value) ? value[0] : value) };
        }),
      ),
    );
  });

  it("the graders the contract declares are the ones graderProblems accepts", () => {
    const good = [
      ...toJobGraders(["exact", "contains", "json_valid", { type: "regex", pattern: "^a", flags: "i" }, { type: "json_schema", schema: { type: "object" } }]),
      { type: "custom", name: "polite.v2" },
    ];
    for (const grader of good) {
      assert.ok(Value.Check(JobGrader, grader), JSON.stringify(grader));
      assert.deepEqual(graderProblems([grader], { functions: false }), [], JSON.stringify(grader));
    }
    const bad = [{ type: "fuzzy" }, { type: "regex" }, { type: "json_schema" }, { type: "custom" }, { type: "custom", name: "not a name" }, 7, null];
    for (const grader of bad) {
      assert.ok(!Value.Check(JobGrader, grader), JSON.stringify(grader));
      assert.equal(graderProblems([grader], { functions: false }).length, 1, JSON.stringify(grader));
    }
  });
});
