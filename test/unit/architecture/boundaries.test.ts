/**
 * The folder boundaries of ARCHITECTURE.md ("Folders"), checked on every source file: each import of ours must land in
 * a folder the importer may use, `vscode` only in the extension and its tests, no HTTP in the engine, no Node built-ins
 * in the code the browser bundles. Imports are read with TypeScript's own pre-processor (strings and comments that
 * mention a module do not count); `.svelte` files contribute their <script> blocks.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { repoRoot } from "../../support/cloud.js";

/** Our top-level source folders and the folders of ours each may import (itself always). Mirrors ARCHITECTURE.md. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  sdk: ["engine"],
  engine: [],
  cloud: ["sdk", "engine", "server-shared"],
  cli: ["sdk", "cloud", "engine", "studio"],
  studio: ["sdk", "server-shared"],
  "server-shared": ["sdk"],
  "ui-shared": ["sdk"],
  webview: ["ui-shared", "sdk"],
  extension: ["ui-shared", "sdk", "studio"],
};

/** sdk modules with no Node built-ins and nothing else of ours but each other (and TypeBox): what browser bundles may import. */
const CONTRACT = "sdk/api/"; // the API contract: browser-safe, and all that server-shared/ may use of the sdk
const BROWSER_SAFE_SDK = [
  "sdk/wire.ts",
  "sdk/manifest.ts",
  "sdk/modelFacts.ts",
  "sdk/workerList.ts",
  "sdk/keyLabel.ts",
  "sdk/logMessage.ts",
  "sdk/sseParser.ts",
  "sdk/trainer/dryRunReport.ts",
  ...sourceFiles(CONTRACT),
];
const BROWSER_SAFE_PACKAGES = ["@sinclair/typebox", "@sinclair/typebox/type"];

/** Folders bundled for the browser or a webview: no Node built-ins, and only the browser-safe sdk modules. */
const BROWSER_FOLDERS = ["webview", "ui-shared"];

/** Packages that speak HTTP (or any network protocol); the engine knows nothing about them. */
const NETWORK_PACKAGES = /^(node:)?(http|https|http2|net|tls|dgram)$|^(fastify|@fastify\/.*|undici|ws|eventsource-parser|pg|openai)$/;

/** Test folders that run inside VS Code's extension host, and so may import `vscode`. */
const VSCODE_TEST_FOLDERS = ["test/extension", "test/e2e/vscode", "test/unit/extension"];

const NODE_BUILTINS = new Set((await import("node:module")).builtinModules.flatMap((m) => [m, `node:${m}`]));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(repoRoot, dir))) {
    const rel = path.posix.join(dir, name);
    if (name === "node_modules" || name === "dist") continue;
    if (statSync(path.join(repoRoot, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|mts|svelte)$/.test(name) && !name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

/** The module specifiers a file imports (static, dynamic, and `export ... from`). */
function importsOf(file: string): string[] {
  let text = readFileSync(path.join(repoRoot, file), "utf8");
  if (file.endsWith(".svelte")) text = [...text.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join("\n");
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** Resolves a relative specifier to a repo-relative source path (`.js` written for `.ts`). */
function resolveOurs(importer: string, spec: string): string {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(importer), spec));
  return target.replace(/\.js$/, ".ts");
}

const topFolder = (file: string) => file.split("/")[0];

interface Violation {
  file: string;
  spec: string;
  why: string;
}

/** What is wrong with `file` importing each of `specs`, judged by the rules above. */
function judge(file: string, specs: readonly string[]): Violation[] {
  const found: Violation[] = [];
  const folder = topFolder(file);
  for (const spec of specs) {
    const add = (why: string) => found.push({ file, spec, why });
    if (spec === "vscode") {
      if (folder !== "extension" && !VSCODE_TEST_FOLDERS.some((t) => file.startsWith(`${t}/`))) add("only extension/ imports vscode");
      continue;
    }
    if (folder === "engine" && NETWORK_PACKAGES.test(spec)) add("engine/ knows nothing about HTTP");
    if (BROWSER_FOLDERS.includes(folder) && NODE_BUILTINS.has(spec)) add(`${folder}/ is bundled for the browser: no Node built-ins`);
    if (folder === "test" || !spec.startsWith(".")) continue;
    const target = resolveOurs(file, spec);
    const targetFolder = topFolder(target);
    if (targetFolder === folder || !(targetFolder in MAY_IMPORT)) continue;
    if (!MAY_IMPORT[folder].includes(targetFolder)) {
      add(`${folder}/ may import ${MAY_IMPORT[folder].join(", ") || "nothing of ours"}`);
    } else if (folder === "server-shared" && !target.startsWith(CONTRACT)) {
      add("server-shared/ may import only the sdk's API contract");
    } else if (BROWSER_FOLDERS.includes(folder) && targetFolder === "sdk" && !BROWSER_SAFE_SDK.includes(target)) {
      add(`${folder}/ may import only the browser-safe sdk modules`);
    }
  }
  return found;
}

/** Each import cycle among our source files (type-only and dynamic imports count: a reader follows them too). */
function importCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components; a component of more than one file, or a file importing itself, is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges.get(file)?.includes(file)) cycles.push(component.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** Our source files (tests aside) and the files of ours each imports. */
function importGraph(): Map<string, string[]> {
  const files = Object.keys(MAY_IMPORT).flatMap((folder) => sourceFiles(folder));
  const known = new Set(files);
  const ours = (file: string, spec: string) => {
    const target = resolveOurs(file, spec);
    return known.has(target) ? target : target.replace(/\.ts$/, ".svelte");
  };
  return new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((spec) => spec.startsWith("."))
        .map((spec) => ours(file, spec))
        .filter((t) => known.has(t)),
    ]),
  );
}

function violations(): Violation[] {
  return [...Object.keys(MAY_IMPORT), "test"].flatMap((folder) => sourceFiles(folder).flatMap((file) => judge(file, importsOf(file))));
}

describe("architecture: folder boundaries (ARCHITECTURE.md, Folders)", () => {
  it("every import stays inside what its folder may use", () => {
    const found = violations();
    assert.deepEqual(found, [], found.map((v) => `${v.file}: ${v.spec} (${v.why})`).join("\n"));
  });

  it("no source file imports itself through others (no import cycle)", () => {
    const cycles = importCycles(importGraph());
    assert.deepEqual(cycles, [], cycles.map((c) => c.join(" <-> ")).join("\n"));
  });

  it("finds a cycle of two and of three files, and none in a chain (the cycle check can fail)", () => {
    assert.deepEqual(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", ["a"]],
        ]),
      ),
      [["a", "b"]],
    );
    assert.deepEqual(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]],
        ]),
      ),
      [["a", "b", "c"]],
    );
    assert.deepEqual(
      importCycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", []],
        ]),
      ),
      [],
    );
  });

  it("the browser-safe sdk modules import no Node built-ins and nothing of ours but each other", () => {
    for (const file of BROWSER_SAFE_SDK) {
      for (const spec of importsOf(file)) {
        assert.ok(!NODE_BUILTINS.has(spec), `${file} imports ${spec}`);
        if (spec.startsWith(".")) assert.ok(BROWSER_SAFE_SDK.includes(resolveOurs(file, spec)), `${file} imports ${spec}`);
        else assert.ok(BROWSER_SAFE_PACKAGES.includes(spec), `${file} imports the package ${spec}`);
      }
    }
  });

  it("ARCHITECTURE.md's folder table says what this check enforces", () => {
    const doc = readFileSync(path.join(repoRoot, "ARCHITECTURE.md"), "utf8");
    for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${folder}/\` |`));
      assert.ok(row, `ARCHITECTURE.md has no row for ${folder}/`);
      const mayImport = row.split("|").at(-2)!;
      const named = [...mayImport.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]).sort();
      assert.deepEqual(named, [...allowed].sort(), `ARCHITECTURE.md's row for ${folder}/ names ${named.join(", ")}`);
    }
  });

  it("refuses each kind of forbidden import (the check can fail)", () => {
    const refused = (file: string, spec: string) => judge(file, [spec]).length === 1;
    assert.ok(refused("studio/routes/x.ts", "../../cloud/serve.js"), "studio/ reaches the cloud only through the SDK");
    assert.ok(refused("sdk/x.ts", "../cloud/serve.js"), "sdk/ imports no cloud/");
    assert.ok(refused("engine/train/x.ts", "node:http"), "engine/ imports no HTTP");
    assert.ok(refused("engine/train/x.ts", "../../sdk/client.js"), "engine/ imports nothing of ours");
    assert.ok(refused("webview/app/x.svelte", "../../cloud/serve.js"), "webview/ imports no server code");
    assert.ok(refused("webview/app/x.ts", "../../sdk/client.js"), "webview/ takes only browser-safe sdk modules");
    assert.ok(!refused("webview/app/x.ts", "../../sdk/api/studio.js"), "webview/ may use the API contract");
    assert.ok(refused("server-shared/x.ts", "../sdk/client.js"), "server-shared/ takes only the contract of the sdk");
    assert.ok(refused("ui-shared/x.ts", "node:fs"), "ui-shared/ is bundled for the browser");
    assert.ok(refused("cloud/x.ts", "vscode"), "vscode only under extension/");
    assert.ok(!refused("extension/x.ts", "vscode"));
    assert.ok(refused("engine/backends/torch/x.ts", "../../../sdk/packageRoot.js"), "engine/ is the bottom layer");
  });
});
