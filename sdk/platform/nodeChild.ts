/**
 * Starting svc's own Node programs (the CLI, a worker, the inference child) the one way that works on every OS:
 * `node <script>` with no shell. A `.cmd` shim cannot be spawned without a shell on Windows (Node refuses it since the
 * CVE-2024-27980 fix), and a shell would re-parse paths with spaces; `windowsHide` keeps each child from opening a
 * console window of its own there (it changes nothing elsewhere).
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { nodeExecutable } from "../nodeRuntime.js";

/** argv that runs a Node script: `[node, script]`. */
export type NodeScriptCommand = readonly [string, ...string[]];

/** `[node, script]` under the user's Node (never VS Code's Electron); `.ts` sources run through tsx. */
export function nodeScriptCommand(script: string, node: string = nodeExecutable()): NodeScriptCommand {
  return script.endsWith(".ts") ? [node, "--import", "tsx", script] : [node, script];
}

export type SpawnFunction = (file: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

/** Spawns `command` (from `nodeScriptCommand`) with `args`: no shell, no console window, the caller's other options. */
export function spawnNodeCommand(
  command: NodeScriptCommand,
  args: readonly string[],
  options: SpawnOptions = {},
  spawnFn: SpawnFunction = spawn,
): ChildProcess {
  const [file, ...prefix] = command;
  return spawnFn(file, [...prefix, ...args], { ...options, shell: false, windowsHide: true });
}
