/** The shape every CLI command has, and a tiny option parser built on node:util parseArgs. */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./output.js";

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parses argv with the given options; unknown flags are a usage error naming the flag. */
export function parse<T extends Options>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\nusage: ${usage}`, 2);
  }
}

export function portOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`${name} must be a port number from 0 to 65535`, 2);
  return port;
}
