#!/usr/bin/env node
/**
 * Everything about the VS Code extension, as the main test runner calls it:
 *   1. type check (extension/tsconfig.json: extension/, its tests and its bench),
 *   2. unit tests of the extension's plain modules (test/unit/extension),
 *   3. mocha suites inside code-server's real extension host, Playwright driving the workbench
 *      (screenshots in test-results/screenshots/vscode-*.png), and the packaged VSIX installed
 *      into a clean code-server (test/e2e/vscode).
 * Needs `npm run build` (CLI, SDK, webviews) first; installs code-server on first use.
 * Prints mocha's usual "N passing / N failing" lines; exits non-zero on any failure.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const mocha = path.join(root, "node_modules", "mocha", "bin", "mocha.js");

function run(label, args) {
  console.log(`\n=== ${label}`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * Type-checks extension/tsconfig.json. It follows imports into sdk/, studio/ and webview/, whose
 * errors the root type check reports; only errors in the extension's own files fail this step.
 */
function typeCheck() {
  console.log("\n=== extension type check");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "--noEmit", "-p", "extension/tsconfig.json"], {
      cwd: root,
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("exit", () => {
      const errors = out.split("\n").filter((line) => /error TS/.test(line));
      const ours = errors.filter((line) => /^(extension\/|test\/(extension|e2e\/vscode|unit\/extension)\/|test\/bench\/extension)/.test(line));
      for (const line of ours) console.log(line);
      if (errors.length > ours.length) console.log(`(${errors.length - ours.length} type errors outside the extension's files; see \`npm run typecheck\`)`);
      console.log(ours.length ? `${ours.length} type errors` : "no type errors in the extension's files");
      resolve(ours.length ? 1 : 0);
    });
  });
}

if (!existsSync(path.join(root, "dist", "cli.mjs")) || !existsSync(path.join(root, "dist", "webview", "jobDetail.js"))) {
  console.error("test-vscode: dist/ is incomplete; run `npm run build` first");
  process.exit(1);
}

const started = Date.now();
const results = [
  await typeCheck(),
  await run("extension unit tests", [mocha, "--config", ".mocharc.json", "test/unit/extension/**/*.test.ts"]),
  await run("VS Code: extension host, workbench end to end, packaged VSIX", [
    mocha,
    "--config",
    ".mocharc.json",
    "--timeout",
    "300000",
    "test/e2e/vscode/*.test.ts",
  ]),
];
console.log(`\ntest-vscode: ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(results.some((code) => code !== 0) ? 1 : 0);
