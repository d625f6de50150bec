/**
 * The Run training console shows `svc start`'s output as it comes (SPEC: the raw text of the run), with one line made
 * readable: the job's first event, which the CLI prints as its raw JSON payload (SPEC section 6), reads as a sentence.
 */

/** `{"model":"svc-tiny","backend":"tfjs-wasm",...}` -> `training started: svc-tiny on tfjs-wasm, cpu, 120 training and 20 eval examples`. */
export function startedLineText(line: string): string | undefined {
  if (!line.startsWith("{") || !line.includes('"backend"')) return undefined;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof data.model !== "string" || typeof data.backend !== "string") return undefined;
  const device = typeof data.device === "string" && data.device ? `, ${data.device}` : "";
  const examples =
    typeof data.trainExamples === "number" ? `, ${data.trainExamples} training${data.evalExamples ? ` and ${data.evalExamples} eval` : ""} examples` : "";
  return `training started: ${data.model} on ${data.backend}${device}${examples}`;
}

/** The output with the started line rewritten; everything else as `svc start` printed it. */
export function runOutputForDisplay(output: string): string {
  if (!output.includes('"backend"')) return output;
  return output
    .split("\n")
    .map((line) => startedLineText(line) ?? line)
    .join("\n");
}
