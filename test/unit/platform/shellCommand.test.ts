import assert from "node:assert/strict";
import { shellCommandLine, shellKind } from "../../../sdk/platform/shellCommand.js";

describe("platform: the extension's terminal commands", () => {
  const argv = ["C:\\Program Files\\nodejs\\node.exe", "C:\\Users\\O'Brien\\ws\\node_modules\\svc\\dist\\cli.mjs", "init"];

  it("PowerShell gets the call operator and single quotes (a quoted path alone is a string there)", () => {
    assert.equal(shellKind("C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "win32"), "powershell");
    assert.equal(shellKind("C:\\Program Files\\PowerShell\\7\\pwsh.exe", "win32"), "powershell");
    assert.equal(
      shellCommandLine(argv, "powershell"),
      "& 'C:\\Program Files\\nodejs\\node.exe' 'C:\\Users\\O''Brien\\ws\\node_modules\\svc\\dist\\cli.mjs' 'init'",
    );
  });

  it("cmd.exe gets double quotes where needed", () => {
    assert.equal(shellKind("C:\\Windows\\System32\\cmd.exe", "win32"), "cmd");
    assert.equal(shellCommandLine(argv, "cmd"), '"C:\\Program Files\\nodejs\\node.exe" "C:\\Users\\O\'Brien\\ws\\node_modules\\svc\\dist\\cli.mjs" init');
  });

  it("POSIX shells (and Git Bash on Windows) get single quotes where needed", () => {
    assert.equal(shellKind("/bin/zsh", "darwin"), "posix");
    assert.equal(shellKind("C:\\Program Files\\Git\\bin\\bash.exe", "win32"), "posix");
    assert.equal(shellKind(undefined, "win32"), "powershell");
    assert.equal(shellKind(undefined, "linux"), "posix");
    assert.equal(shellCommandLine(["/usr/bin/node", "/home/ada/my proj/cli.mjs", "login"], "posix"), "/usr/bin/node '/home/ada/my proj/cli.mjs' login");
  });
});
