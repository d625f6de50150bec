/** `svc models discover`: the GGUF files on this machine that `svc models add NAME` can register. */
import { formatBytes, formatParameterCount, trainingLabel } from "../../sdk/modelFacts.js";
import { discoverModels, type Discovery } from "../discover.js";
import { formatTable } from "../table.js";

export async function discoverModelsCommand(json: boolean): Promise<number> {
  const discovery = await discoverModels();
  process.stdout.write(json ? JSON.stringify(discovery) + "\n" : formatDiscovery(discovery));
  // Skipped files are worth a look but are not a failure of the command.
  for (const note of discovery.notes) process.stderr.write(`svc: ${note}\n`);
  return 0;
}

export function formatDiscovery({ models }: Discovery): string {
  if (models.length === 0) {
    return (
      "no GGUF files found in LM Studio's models folder, the Hugging Face cache or Ollama's models folder.\n" +
      "Set SVC_MODEL_PATHS to more folders to search, or register a file directly: svc models add FILE.gguf\n"
    );
  }
  const rows = models.map((m) => [
    m.name,
    m.architecture,
    formatParameterCount(m.parameters),
    m.quantization,
    m.contextLength === null ? "-" : String(m.contextLength),
    formatBytes(m.sizeBytes),
    trainingLabel(m),
    m.source,
    m.path,
  ]);
  const table = formatTable(["NAME", "ARCHITECTURE", "PARAMETERS", "QUANTIZATION", "CONTEXT", "SIZE", "TRAINING", "FOUND IN", "PATH"], rows);
  return `${table}\nRegister one with: svc models add NAME [--name NEW-NAME]\n`;
}
