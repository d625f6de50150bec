import assert from "node:assert/strict";
import { jobConfigProblems, TrainerConfigError, validateTrainerConfig, type TrainerConfig } from "../../../sdk/trainer/config.js";
import { builtInGrader, graderProblems, passRate, samplePasses, toJobGraders, type CustomGrader } from "../../../sdk/trainer/graders.js";

const sample = (answer: string, reference = '{"answer": "day"}') => ({ prompt: "What is the opposite of night?", reference, answer });
const withEval: TrainerConfig = { name: "run", model: "svc-tiny", dataset: "data/train.jsonl", evalDataset: "data/eval.jsonl", maxSteps: 10 };

describe("graders: each sample answer judged against the eval row's reference", () => {
  it("exact compares trimmed text; contains looks for the reference inside the answer", () => {
    const exact = builtInGrader({ type: "exact" });
    assert.equal(exact(sample(' {"answer": "day"}\n')), true);
    assert.equal(exact(sample('{"answer": "Day"}')), false);
    const contains = builtInGrader({ type: "contains" });
    assert.equal(contains(sample('Sure: {"answer": "day"} ok')), true);
    assert.equal(contains(sample("day")), false);
  });

  it("regex matches the answer, the same way for every answer even with a global flag", () => {
    const regex = builtInGrader({ type: "regex", pattern: '^\\{"answer": ".+"\\}$', flags: "g" });
    assert.equal(regex(sample('{"answer": "day"}')), true);
    assert.equal(regex(sample('{"answer": "night"}')), true, "lastIndex from the previous answer must not carry over");
    assert.equal(regex(sample("The opposite is day.")), false);
  });

  it("json_valid parses the answer; json_schema also checks it against the trainer's schema", () => {
    const valid = builtInGrader({ type: "json_valid" });
    assert.equal(valid(sample('{"answer": 1}')), true);
    assert.equal(valid(sample('{"answer": ')), false);
    const schema = builtInGrader({
      type: "json_schema",
      schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false },
    });
    assert.equal(schema(sample('{"answer": "day"}')), true);
    assert.equal(schema(sample('{"answer": 1}')), false);
    assert.equal(schema(sample('{"reply": "day"}')), false);
    assert.equal(schema(sample("day")), false);
  });

  it("a sample passes when every grader that ran says yes; the pass rate counts graded samples", () => {
    assert.equal(samplePasses({ json_valid: true, exact: true }), true);
    assert.equal(samplePasses({ json_valid: true, exact: false }), false);
    assert.equal(samplePasses({ json_valid: true, polite: null }), true);
    assert.equal(samplePasses({}), false);
    assert.equal(passRate([{ grades: { exact: true } }, { grades: { exact: false } }, { grades: { polite: null } }]), 0.5);
    assert.equal(passRate([{ grades: { polite: null } }]), null);
  });

  it("a custom grader is a function of the trainer; the job config names it and keeps the built-ins whole", async () => {
    const polite: CustomGrader = { name: "mentions-answer", grade: ({ answer, reference }) => answer.includes(JSON.parse(reference).answer) };
    assert.equal(await polite.grade(sample("it is day")), true);
    assert.equal(await polite.grade(sample("it is night")), false);
    const config = validateTrainerConfig({ ...withEval, graders: ["json_valid", { type: "regex", pattern: "day" }, polite] });
    assert.deepEqual(config.graders, [{ type: "json_valid" }, { type: "regex", pattern: "day" }, { type: "custom", name: "mentions-answer" }]);
    assert.deepEqual(config.samples, { count: 8, maxTokens: 128 });
    assert.deepEqual(jobConfigProblems(JSON.parse(JSON.stringify(config))), [], "the cloud accepts what createTrainer sends");
    assert.deepEqual(toJobGraders(["exact"]), [{ type: "exact" }]);
    assert.deepEqual(validateTrainerConfig(withEval).graders, [{ type: "exact" }], "exact by default");
  });

  it("a bad regex or schema is a config error from createTrainer, before any training", () => {
    assert.throws(
      () => validateTrainerConfig({ ...withEval, graders: [{ type: "regex", pattern: "(unclosed" }] }),
      (e: unknown) =>
        e instanceof TrainerConfigError && e.field === "graders[0]" && /graders\[0\] has a pattern that is not a regular expression/.test(e.message),
    );
    assert.throws(
      () => validateTrainerConfig({ ...withEval, graders: ["exact", { type: "json_schema", schema: { type: "strnig" } }] }),
      (e: unknown) => e instanceof TrainerConfigError && e.field === "graders[1]" && /has a schema that is not valid JSON Schema/.test(e.message),
    );
    assert.throws(() => validateTrainerConfig({ ...withEval, graders: ["fuzzy" as "exact"] }), /graders\[0\] has type "fuzzy"; choose from exact, contains/);
    assert.throws(
      () => validateTrainerConfig({ ...withEval, graders: [{ name: "exact", grade: () => true }] }),
      /graders\[0\] is named "exact", a built-in grader's name/,
    );
    assert.throws(() => validateTrainerConfig({ ...withEval, samples: { count: 100 } }), /samples.count must be an integer from 0 to 64/);
  });

  it("the cloud refuses a job config whose graders it cannot run, and a function never reaches it", () => {
    assert.deepEqual(
      jobConfigProblems({ maxSteps: 1, graders: [{ type: "regex", pattern: "[" }] }).map((p) => p.field),
      ["graders[0]"],
    );
    assert.equal(graderProblems([{ name: "f", grade: () => true }], { functions: false })[0]?.field, "graders[0]");
  });
});
