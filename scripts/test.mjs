#!/usr/bin/env node
// The whole test suite, as CI runs it: type check, build, unit tests, integration tests against
// the real cloud on SQLite and again on a throwaway PostgreSQL cluster, and the infrastructure
// smoke tests (Chromium, code-server). Prints one closing line "Total: N passed, N failed".
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const totals = { passed: 0, failed: 0, pending: 0 };
const failures = [];
/**
 * Mocha's account of each failure (titles and errors, without stack frames), repeated just above the
 * closing line, where the short tail of a log that CI keeps still shows it.
 */
const failureReports = [];
const REPORT_LIMIT = 3000;

/**
 * Runs a command, its output streamed live; or, when `buffered` (steps that run side by side),
 * collected and printed in one piece when it ends, so parallel steps' lines do not interleave.
 */
function run(label, command, args, env = {}, buffered = false) {
  return new Promise((resolve) => {
    if (!buffered) console.log(`\n=== ${label}`);
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", buffered ? "pipe" : "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!buffered) process.stdout.write(chunk);
    });
    if (buffered) {
      child.stderr.on("data", (chunk) => (out += chunk));
      child.on("close", (code) => {
        console.log(`\n=== ${label}`);
        process.stdout.write(out);
        resolve({ code: code ?? 1, out });
      });
    } else {
      child.on("exit", (code) => resolve({ code: code ?? 1, out }));
    }
  });
}

/**
 * The files that take longest, started first: two files run at a time, and a phase whose longest
 * file starts last ends with one side idle while it runs. Any order is correct; this one is shorter.
 */
const LONGEST_FIRST = [
  "test/integration/real-model-e2e.test.ts",
  "test/integration/models-add-hf.test.ts",
  "test/integration/upload-chaos.test.ts",
  "test/integration/hf-safetensors-base.test.ts",
  "test/integration/training-backends.test.ts",
  "test/integration/cli-auth.test.ts",
  "test/integration/cli-init-templates.test.ts",
  "test/integration/installed-package.test.ts",
  "test/integration/cli-start-dry-run.test.ts",
  "test/integration/training-fsdp.test.ts",
  "test/unit/engine/real-engine-parity.test.ts",
  "test/unit/engine/torch-quantized-base.test.ts",
  "test/unit/engine/torch-ranks.test.ts",
  "test/unit/engine/hf-tokenizer-parity.test.ts",
  "test/unit/engine/real-models-llama-cpp.test.ts",
  "test/integration/cloud-multi-instance.test.ts",
  "test/integration/cloud-restart-worker.test.ts",
  "test/e2e/browser/overview-stop-recent.test.ts",
  "test/e2e/browser/studio-first-hour.test.ts",
  "test/e2e/vscode/extension-host.test.ts",
];

/** The files a glob names ("**" any folders, "*" any name part), relative to the root. */
function expand(glob) {
  if (!glob.includes("*")) return existsSync(path.join(root, glob)) ? [glob] : [];
  const base = glob.slice(0, glob.indexOf("*")).replace(/[^/]*$/, "");
  const pattern = new RegExp(
    `^${glob
      .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*\//g, "(.*/)?")
      .replace(/\*/g, "[^/]*")}$`,
  );
  if (!existsSync(path.join(root, base))) return [];
  return readdirSync(path.join(root, base), { recursive: true })
    .map((file) => `${base}${String(file).split(path.sep).join("/")}`)
    .filter((file) => pattern.test(file))
    .sort();
}

/** Runs a mocha suite and adds its counts to the totals. */
async function mocha(label, globs, env = {}, extra = []) {
  const named = [...new Set(globs.flatMap(expand))];
  const files = [...LONGEST_FIRST.filter((file) => named.includes(file)), ...named.filter((file) => !LONGEST_FIRST.includes(file))];
  const { code, out } = await run(
    label,
    process.execPath,
    [path.join(root, "node_modules/mocha/bin/mocha.js"), "--config", ".mocharc.json", ...extra, ...files],
    env,
  );
  // Mocha's summary is its last "N passing" line; a suite that runs a mocha of its own inside a test
  // (the VS Code extension host's, its lines prefixed "│") adds that mocha's counts to it.
  const summary = (word) => {
    const lines = [...out.matchAll(new RegExp(`^(\\s*│)?\\s*(\\d+) ${word}\\b`, "gm"))];
    const own = lines.filter((m) => !m[1]).at(-1);
    const nested = lines.filter((m) => m[1]).reduce((sum, m) => sum + Number(m[2]), 0);
    return { count: Number(own?.[2] ?? 0) + nested, at: own?.index ?? -1 };
  };
  const count = (word) => summary(word).count;
  const passed = count("passing");
  const failed = count("failing");
  totals.passed += passed;
  totals.failed += failed;
  totals.pending += count("pending");
  if (code !== 0 && failed === 0) {
    totals.failed += 1; // the runner itself failed (crash, no tests found)
    failures.push(`${label}: mocha exited with ${code}`);
  } else if (failed > 0) {
    failures.push(`${label}: ${failed} failing`);
    const report = out
      .slice(Math.max(0, summary("failing").at))
      .split("\n")
      .filter((line) => line.trim() !== "" && !/^\s+at /.test(line))
      .join("\n");
    failureReports.push(`--- ${label}\n${report.length > REPORT_LIMIT ? `${report.slice(0, REPORT_LIMIT)}\n[... cut]` : report}`);
  }
}

async function step(label, command, args, buffered = false) {
  const { code } = await run(label, command, args, {}, buffered);
  if (code !== 0) {
    totals.failed += 1;
    failures.push(`${label} failed (exit ${code})`);
    return false;
  }
  return true;
}

/**
 * Mocha runs the unit, integration, PostgreSQL, browser and VS Code files two at a time, in two
 * worker processes that take the files in turn: most of a file's time is spent waiting on the
 * children it starts (clouds, workers, Python, llama.cpp, Chromium, code-server) or on one
 * single-threaded process, so a second file uses the core the first leaves idle. What files share
 * is safe for that: temp folders per test, free ports, a database per cloud, a Chromium profile
 * and a code-server home per session, builds renamed into place (sharedBuild.ts, llamaCppTools.ts).
 * SVC_TEST_JOBS=1 runs one file at a time.
 */
const jobs = Math.max(1, Number(process.env.SVC_TEST_JOBS) || 2);
const parallel = jobs > 1 ? ["--parallel", "--jobs", String(jobs)] : [];

const hasTests = (dir) => expand(`${dir}/**/*.test.ts`).length > 0;

// Lint and formatting first: cheap, and a finding is as red as a failing test.
await step("lint (Biome, ruff)", process.execPath, [path.join(root, "scripts/lint.mjs")]);
const tsc = path.join(root, "node_modules/typescript/bin/tsc");
// The two type checks and the build read the sources and write nothing the others read, and tsc
// runs on one core: side by side they take about as long as the longest of them.
const [typeMainOk, typeExtensionOk, buildOk] = await Promise.all([
  step("type check", process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], true),
  step("type check (extension)", process.execPath, [tsc, "--noEmit", "-p", "extension/tsconfig.json"], true),
  step("build", process.execPath, [path.join(root, "scripts/build.mjs")], true),
]);
const typeOk = typeMainOk && typeExtensionOk;
if (typeOk && buildOk) {
  if (hasTests("test/unit")) await mocha("unit tests", ["test/unit/**/*.test.ts"], {}, parallel);
  await mocha("integration tests (SQLite)", ["test/integration/**/*.test.ts"], {}, ["--timeout", "120000", ...parallel]);
  const { startPgCluster } = await import("./pg-cluster.mjs");
  const pg = await startPgCluster();
  try {
    // Everything that touches the store runs again on PostgreSQL; training and UI suites stay on SQLite.
    const storeSuites = [
      "test/integration/cloud-*.test.ts",
      "test/integration/oauth.test.ts",
      "test/integration/sdk-session.test.ts",
      "test/integration/edge.test.ts",
    ];
    await mocha("integration tests (PostgreSQL)", storeSuites, { SVC_TEST_DATABASE_URL: pg.url }, ["--timeout", "120000", ...parallel]);
  } finally {
    await pg.stop();
  }
  if (hasTests("test/e2e/browser")) await mocha("browser end-to-end tests", ["test/e2e/browser/**/*.test.ts"], {}, ["--timeout", "180000", ...parallel]);
  if (hasTests("test/e2e/vscode"))
    await mocha("VS Code: extension host, workbench, packaged VSIX", ["test/e2e/vscode/*.test.ts"], {}, ["--timeout", "300000", ...parallel]);
  if (hasTests("test/infra")) await mocha("infrastructure smoke tests", ["test/infra/**/*.test.ts"], {}, ["--timeout", "180000"]);
}

console.log("");
for (const report of failureReports) console.log(report);
for (const failure of failures) console.log(`FAILED: ${failure}`);
const skipped = totals.pending ? `, ${totals.pending} skipped` : "";
console.log(`Total: ${totals.passed} passed, ${totals.failed} failed${skipped}`);
process.exit(totals.failed > 0 ? 1 : 0);
