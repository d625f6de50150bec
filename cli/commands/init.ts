/** `svc init [--template NAME]`: scaffolds a trainable project in the current folder. */
import { existsSync, mkdirSync, writeFileSync, readFileSync, appendFileSync } from "node:fs";
import path from "node:path";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";
import { isTemplateName, templateFiles, templateHelp, UnknownTemplateError } from "../project/templates.js";

const TRAINER = `import { createSvc, createTrainer } from "svc-studio";

// Fine-tunes svc-tiny on data/train.jsonl (OpenAI chat format, one conversation per line).
export const trainer = createTrainer({
  name: "my-first-adapter",
  model: "svc-tiny",
  dataset: "data/train.jsonl",
  evalDataset: "data/eval.jsonl",
  lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj", "o_proj"] }, // attention only: enough for a format, and fast
  maxSteps: 60,
  learningRate: 3e-3,
  batchSize: 8,
  evalSteps: 10,
  saveSteps: 20,
  seed: 42,
});

export default createSvc({ trainer });
`;

const EXAMPLES = [
  ["What is the capital of France?", "Paris."],
  ["What color is the sky?", "Blue."],
  ["How many legs does a cat have?", "Four."],
  ["What is two plus two?", "Four."],
];

const line = ([q, a]: string[]) =>
  JSON.stringify({
    messages: [
      { role: "user", content: q },
      { role: "assistant", content: a },
    ],
  });

/** The default project (no --template): a four-line dataset that shows the loop end to end. */
function quickstartFiles(): [string, string][] {
  return [
    ["src/svc/index.ts", TRAINER],
    ["data/train.jsonl", EXAMPLES.map(line).join("\n") + "\n"],
    ["data/eval.jsonl", EXAMPLES.slice(0, 2).map(line).join("\n") + "\n"],
  ];
}

export const initCommand: Command = {
  ...listed("init"),
  usage: "svc init [--template NAME] [--force]",
  async run(argv) {
    const { values } = parse(argv, { force: { type: "boolean" }, template: { type: "string", short: "t" } }, this.usage);
    if (values.help) {
      process.stdout.write(`usage: ${this.usage}\n\n${this.summary}\n\ntemplates (each trains on svc-tiny in well under a minute):\n${templateHelp()}\n`);
      return 0;
    }
    const template = values.template;
    // An unknown name is refused before anything is read or written, with the names that exist.
    if (template !== undefined && !isTemplateName(template)) throw new CliError(new UnknownTemplateError(template).message, 2);
    const dir = process.cwd();
    const files = template === undefined ? quickstartFiles() : templateFiles(template);
    const existing = files.filter(([f]) => existsSync(path.join(dir, f))).map(([f]) => f);
    if (existing.length > 0 && !values.force)
      throw new CliError(`${existing.join(", ")} already exist${existing.length === 1 ? "s" : ""}; pass --force to overwrite`);
    for (const [file, content] of files) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), content);
      process.stdout.write(`created ${file}\n`);
    }
    const gitignore = path.join(dir, ".gitignore");
    if (!existsSync(gitignore) || !readFileSync(gitignore, "utf8").split("\n").includes(".svc/")) appendFileSync(gitignore, ".svc/\n");
    process.stdout.write("\nnext: npx svc start   (trains and streams the loss)\n      npx svc dev     (the studio in your browser)\n");
    return 0;
  },
};
