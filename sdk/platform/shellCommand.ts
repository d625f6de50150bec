/**
 * A command line typed into a user's terminal, quoted for the shell that reads it. The extension's Init and Sign-in
 * send `node <cli.mjs> init` to the integrated terminal, whose shell is PowerShell on Windows by default (where a
 * line starting with a quoted path is a string, not a command: it needs the call operator `&`), cmd.exe for some,
 * and a POSIX shell elsewhere.
 */
export type ShellKind = "powershell" | "cmd" | "posix";

/** The kind of shell at `shellPath` (VS Code's `env.shell`); POSIX when unknown, on a POSIX platform. */
export function shellKind(shellPath: string | undefined, platform: NodeJS.Platform = process.platform): ShellKind {
  const name =
    (shellPath ?? "")
      .split(/[\\/]/)
      .pop()
      ?.toLowerCase()
      .replace(/\.exe$/, "") ?? "";
  if (name === "pwsh" || name === "powershell") return "powershell";
  if (name === "cmd") return "cmd";
  if (name === "") return platform === "win32" ? "powershell" : "posix";
  return "posix";
}

export function shellCommandLine(argv: readonly string[], kind: ShellKind): string {
  if (kind === "powershell") return `& ${argv.map((a) => `'${a.replace(/'/g, "''")}'`).join(" ")}`;
  if (kind === "cmd") return argv.map((a) => (/^[\w.:\\/-]+$/.test(a) ? a : `"${a.replace(/"/g, '""')}"`)).join(" ");
  return argv.map((a) => (/^[\w.:/=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}
