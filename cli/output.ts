/** How the CLI reports: results on stdout, one clear line on stderr for an error, non-zero exit. */

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export function printError(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`svc: ${message.split("\n").join("\n     ")}\n`);
  return err instanceof CliError ? err.exitCode : 1;
}
