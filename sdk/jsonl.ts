/**
 * Validation of chat fine-tuning datasets in the OpenAI JSONL format:
 * `{"messages":[{"role":"user","content":"..."},{"role":"assistant","content":"..."}]}` per line.
 * Shared by `svc start` (reports problems before any upload) and the cloud (never trusts a client).
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface JsonlReport {
  /** Number of valid examples (non-blank lines). */
  exampleCount: number;
  /** One readable line per problem, `line N: why`, at most MAX_REPORTED_ERRORS of them. */
  errors: string[];
}

const ROLES = new Set(["system", "user", "assistant"]);
const MAX_REPORTED_ERRORS = 20;

export function validateChatJsonl(text: string): JsonlReport {
  const errors: string[] = [];
  let exampleCount = 0;
  let problemCount = 0;
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const problem = lineProblem(line);
    if (problem) {
      problemCount += 1;
      if (errors.length < MAX_REPORTED_ERRORS) errors.push(`line ${index + 1}: ${problem}`);
    } else {
      exampleCount += 1;
    }
  });
  if (problemCount > errors.length) errors.push(`... and ${problemCount - errors.length} more invalid lines`);
  if (problemCount === 0 && exampleCount === 0) errors.push("the dataset is empty: it needs at least one example line");
  return { exampleCount, errors };
}

function lineProblem(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "not valid JSON";
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return "must be a JSON object with a messages array";
  const messages = (value as { messages?: unknown }).messages;
  if (!Array.isArray(messages) || messages.length === 0) return "messages must be a non-empty array";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role?: unknown; content?: unknown };
    if (!m || typeof m !== "object") return `messages[${i}] must be an object`;
    if (typeof m.role !== "string" || !ROLES.has(m.role)) return `messages[${i}].role must be "system", "user" or "assistant"`;
    if (typeof m.content !== "string") return `messages[${i}].content must be a string`;
  }
  if (!messages.some((m) => (m as ChatMessage).role === "assistant")) return "messages must contain an assistant message to learn from";
  return null;
}
