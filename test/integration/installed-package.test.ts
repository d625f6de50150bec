/**
 * The package as a user installs it: `npm pack` of this checkout, the tarball installed into an empty
 * project outside the repo (a copy, no links) with every install script blocked (`--ignore-scripts`,
 * what npm does to the scripts a project has not approved). Then: the clear message svc gives without
 * better-sqlite3's binding, the README's approval step, and `svc init`, `svc start`, `svc dev` and one
 * edge request, each run through `npx svc` in that project; and the README's GPU worker steps in
 * another fresh folder.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "../support/cloud.js";
import { pollUntil } from "../support/poll.js";
import { studioOf } from "../support/studioDev.js";
import { spawnProcess, waitForExit } from "../support/processes.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { installTarball, npm, packCheckout, provideSqliteBinding, type PackResult } from "../support/installedPackage.js";

describe("svc-studio installed from its npm tarball", function () {
  this.timeout(600_000);
  let tmp: TempDir;
  let pack: PackResult;
  let project: string;
  let home: string;
  let cloudStarted = false;

  const env = () => ({ ...process.env, SVC_HOME: home, SVC_CLOUD_URL: "", SVC_CLOUD_PORT: "0", SVC_EDGE_PORT: "0", SVC_TRAIN_BACKEND: "tfjs" });
  const svc = (args: string[]) => spawnSync("npx", ["--no-install", "svc", ...args], { cwd: project, env: env(), encoding: "utf8", timeout: 300_000 });

  before(async () => {
    tmp = await createTempDir("installed");
    const started = Date.now();
    pack = packCheckout(tmp.path);
    project = path.join(tmp.path, "my project");
    home = path.join(tmp.path, "home");
    const packed = Date.now();
    installTarball(path.join(tmp.path, pack.filename), project);
    console.log(
      `      packed ${pack.entryCount} files, ${(pack.size / 1024 / 1024).toFixed(2)} MB, in ${((packed - started) / 1000).toFixed(1)} s; installed in ${((Date.now() - packed) / 1000).toFixed(1)} s`,
    );
  });

  after(async () => {
    if (cloudStarted) svc(["cloud", "stop"]);
    await tmp?.remove();
  });

  it("packs the built CLI, SDK, studio, model, templates and torch worker, and nothing else", () => {
    const files = pack.files.map((f) => f.path);
    assert.equal(pack.name, "svc-studio");
    for (const file of [
      "dist/cli.mjs",
      "dist/sdk.mjs",
      "dist/types/sdk/index.d.ts",
      "dist/webview/index.html",
      "models/svc-tiny.gguf",
      "templates/translation/src/svc/index.ts",
      "engine/backends/torch/requirements.txt",
      "engine/backends/torch/python/svc_torch_server.py",
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "package.json",
    ]) {
      assert.ok(files.includes(file), `${file} is not in the tarball`);
    }
    const unexpected = files.filter(
      (f) =>
        f.endsWith(".map") ||
        f.startsWith("test/") ||
        f.startsWith("dist/extension/") ||
        f.includes("__pycache__") ||
        (f.endsWith(".ts") && !f.endsWith(".d.ts") && !f.startsWith("templates/")),
    );
    assert.deepEqual(unexpected, []);
    assert.ok(pack.entryCount < 250 && pack.size < 5 * 1024 * 1024, `${pack.entryCount} files, ${pack.size} bytes`);
    const installed = path.join(project, "node_modules", "svc-studio");
    assert.ok(!lstatSync(installed).isSymbolicLink());
    assert.equal(JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")).scripts?.prepare, undefined);
  });

  it("with its install scripts blocked, svc start says which script to approve and how", () => {
    const init = svc(["init"]);
    assert.equal(init.status, 0, init.stderr);
    const start = svc(["start"]);
    assert.notEqual(start.status, 0);
    assert.match(start.stderr, /better-sqlite3 has no native binding/);
    assert.match(start.stderr, /npm install-scripts approve better-sqlite3\n\s*npm rebuild better-sqlite3/);
  });

  it("after the README's approval, svc start trains, svc dev serves the studio and the edge answers", async () => {
    npm(["install-scripts", "approve", "better-sqlite3"], project);
    const allowScripts = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8")).allowScripts as Record<string, boolean>;
    assert.ok(
      Object.keys(allowScripts).some((entry) => entry.startsWith("better-sqlite3")),
      JSON.stringify(allowScripts),
    );
    provideSqliteBinding(project);

    const entry = path.join(project, "src", "svc", "index.ts");
    writeFileSync(entry, readFileSync(entry, "utf8").replace(/maxSteps:\s*\d+/, "maxSteps: 4"));
    const cloud = svc(["cloud", "start", "--port", "0", "--edge-port", "0"]);
    assert.equal(cloud.status, 0, cloud.stderr);
    cloudStarted = true;
    const start = svc(["start"]);
    assert.equal(start.status, 0, start.stderr);
    assert.match(start.stdout, /completed/);

    // The SDK as the user's code resolves it: the installed package's `exports`.
    const daemon = JSON.parse(readFileSync(path.join(home, "cloud", "daemon.json"), "utf8")) as { cloudUrl: string; edgeUrl: string };
    const sdkFile = createRequire(path.join(project, "package.json")).resolve("svc-studio");
    assert.ok(sdkFile.startsWith(path.join(project, "node_modules", "svc-studio")), sdkFile);
    const previousHome = process.env.SVC_HOME;
    process.env.SVC_HOME = home;
    try {
      const { ProjectSession } = (await import(pathToFileURL(sdkFile).href)) as typeof import("../../sdk/index.js");
      const client = await (await ProjectSession.open({ projectDir: project, cloudUrl: daemon.cloudUrl })).scopedClient();
      const [job] = await client.listJobs();
      assert.equal(job?.status, "completed");
      const deployment = await client.createDeployment({ slug: "installed", target: { kind: "adapter", jobId: job.id } });
      const { key } = await client.createDeploymentKey(deployment.id, { label: "test" });
      const res = await fetch(`${daemon.edgeUrl}/d/installed/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "installed", messages: [{ role: "user", content: "Hi" }], max_tokens: 8 }),
      });
      const body = await res.text();
      assert.equal(res.status, 200, body);
      assert.equal(typeof (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0].message.content, "string");
    } finally {
      if (previousHome === undefined) delete process.env.SVC_HOME;
      else process.env.SVC_HOME = previousHome;
    }

    // The bin link npm made, run by node directly: npx would not pass the Ctrl-C (SIGINT) on to it.
    const dev = spawnProcess(process.execPath, [path.join(project, "node_modules", ".bin", "svc"), "dev", "--port", "0"], {
      cwd: project,
      env: env(),
      name: "installed-svc-dev",
    });
    try {
      const { url, token } = await studioOf(dev, 30_000);
      const manifest = (await (await fetch(`${url}/api/manifest`, { headers: { "X-Svc-Studio-Token": token } })).json()) as {
        status: string;
        trainer?: { name: string };
      };
      assert.equal(manifest.status, "ok");
      assert.equal(manifest.trainer?.name, "my-first-adapter");
      dev.child.kill("SIGINT");
      assert.equal((await waitForExit(dev, 10_000)).code, 0, dev.recentOutput());
    } finally {
      await dev.stop();
    }
  });

  it("the README's GPU worker steps, run as written in a fresh folder, connect a torch worker to that cloud", async () => {
    const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
    const block = /# on the GPU box, in that session\n([\s\S]*?)\n```/.exec(readme)?.[1];
    assert.ok(block && /npm i [^\n]*svc-studio/.test(block) && block.includes("npx svc worker"), "the README's GPU worker steps");
    const daemon = JSON.parse(readFileSync(path.join(home, "cloud", "daemon.json"), "utf8")) as { cloudUrl: string };
    const token = readFileSync(path.join(home, "cloud", "worker-token"), "utf8").trim();
    // What stands in for the GPU box: the packed tarball for the registry's copy, this cloud for the tunnelled one.
    const script = block
      .replace(/npm i ([^\n]*)svc-studio/, `npm i $1--prefer-offline --no-audit --no-fund ${JSON.stringify(path.join(tmp.path, pack.filename))}`)
      .replace("<token>", token)
      .replace("http://127.0.0.1:7870", daemon.cloudUrl);
    const gpuBox = path.join(tmp.path, "gpu box");
    mkdirSync(gpuBox);
    const steps = spawnProcess("bash", ["-ec", script], {
      cwd: gpuBox,
      env: { ...process.env, SVC_HOME: path.join(gpuBox, "home") },
      name: "readme-gpu-worker",
    });
    try {
      await pollUntil(() => /svc worker \S+ connected to .* \(backend: torch\)/.test(steps.recentOutput()) || undefined, {
        timeoutMs: 400_000,
        description: "the worker's connected line",
        abortIf: () => (steps.exitStatus() ? steps.recentOutput() : undefined),
      });
      assert.ok(!lstatSync(path.join(gpuBox, "svc-worker", "node_modules", "svc-studio")).isSymbolicLink());
    } finally {
      await steps.stop();
    }
  });
});
