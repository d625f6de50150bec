/** `svc models list`: the cloud's base models as a table (or JSON), with why serve-only ones cannot be trained. */
import { formatParameterCount, trainingLabel } from "../../sdk/modelFacts.js";
import { ProjectSession } from "../../sdk/session.js";
import type { BaseModel } from "../../sdk/wire.js";
import { formatTable } from "../table.js";

export async function listModelsCommand(json: boolean): Promise<number> {
  const session = await ProjectSession.open({ projectDir: process.cwd() });
  const models = await session.client().listModels();
  process.stdout.write(json ? JSON.stringify(models) + "\n" : formatModelList(models));
  return 0;
}

const UNKNOWN = "-";

export function formatModelList(models: readonly BaseModel[]): string {
  if (models.length === 0) return "no base models registered (svc models discover lists the GGUF files on this machine)\n";
  const rows = models.map((m) => [
    m.name,
    m.source === "upstream" ? "upstream" : (m.architecture ?? UNKNOWN),
    m.parameters === null ? UNKNOWN : formatParameterCount(m.parameters),
    m.quantization ?? UNKNOWN,
    m.contextLength === null ? UNKNOWN : String(m.contextLength),
    trainingLabel(m),
  ]);
  const table = formatTable(["NAME", "ARCHITECTURE", "PARAMETERS", "QUANTIZATION", "CONTEXT", "TRAINING"], rows);
  // The reasons read better under the table than squeezed into a column.
  const reasons = models.filter((m) => !m.trainable && m.notTrainableReason).map((m) => `  ${m.name}: ${m.notTrainableReason}\n`);
  return reasons.length ? `${table}\nserve only:\n${reasons.join("")}` : table;
}
