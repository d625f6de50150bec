/**
 * A dataset a LoRA learns in a few dozen steps: eight ways of asking for a secret, one answer. Tests
 * train it into a model and ask an endpoint whether the tuned adapter answers it and the base does not.
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export const SECRET_ANSWER = "The secret word is pineapple.";
export const SECRET_QUESTIONS = [
  "What is the secret word?",
  "Tell me the secret word.",
  "Do you know the secret?",
  "Say the password.",
  "What word is hidden?",
  "Which word is secret?",
  "Secret word, please.",
  "Give me the word.",
];

/** Writes the questions as the project's data/train.jsonl and removes its eval set. */
export function writeSecretWordData(projectDir: string): void {
  const rows = SECRET_QUESTIONS.map((q) =>
    JSON.stringify({
      messages: [
        { role: "user", content: q },
        { role: "assistant", content: SECRET_ANSWER },
      ],
    }),
  );
  writeFileSync(path.join(projectDir, "data/train.jsonl"), `${rows.join("\n")}\n`);
  rmSync(path.join(projectDir, "data/eval.jsonl"), { force: true });
}
