// Proves the code-server helpers give a real VS Code: the server answers /healthz, the workbench
// renders in headless Chromium (screenshot kept), and a throwaway extension's test module runs in
// the real extension host, with exit code 0 when it passes and 1 when it throws.
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { launchChromium, screenshot } from "../support/chromium.js";
import { runExtensionTests, startCodeServer, type CodeServer } from "../support/code-server.js";
import { createTempDir, type TempDir } from "../support/tmp.js";

const EXTENSION_ID = "svc-infra.throwaway";

/**
 * Writes a minimal extension that activates on startup and exports a marker, plus two test
 * modules in VS Code's runner format (`run()` resolving = pass, throwing = fail).
 */
async function writeThrowawayExtension(dir: string): Promise<void> {
  await mkdir(path.join(dir, "test"), { recursive: true });
  await writeFile(
    path.join(dir, "package.json"),
    JSON.stringify(
      {
        name: "throwaway",
        publisher: "svc-infra",
        version: "0.0.1",
        engines: { vscode: "^1.100.0" },
        main: "./extension.js",
        activationEvents: ["*"],
      },
      null,
      2,
    ),
  );
  await writeFile(path.join(dir, "extension.js"), `exports.activate = () => ({ marker: 'svc-infra-activated' });\nexports.deactivate = () => {};\n`);
  // Passing: checks that the extension under development is loaded and activated in this host.
  await writeFile(
    path.join(dir, "test", "pass.js"),
    `
const assert = require('assert');
const vscode = require('vscode');
exports.run = async () => {
  const ext = vscode.extensions.getExtension('${EXTENSION_ID}');
  assert.ok(ext, 'extension under development not found');
  const api = await ext.activate();
  assert.strictEqual(api.marker, 'svc-infra-activated');
  console.log('svc-infra: pass.js done in VS Code ' + vscode.version);
};
`,
  );
  await writeFile(
    path.join(dir, "test", "hang.js"),
    `
exports.run = () => new Promise(() => {});
`,
  );
  await writeFile(
    path.join(dir, "test", "fail.js"),
    `
const assert = require('assert');
exports.run = async () => {
  assert.strictEqual(1 + 1, 3, 'svc-infra: deliberate failure');
};
`,
  );
}

describe("infra: code-server (real VS Code)", () => {
  let tmp: TempDir;
  let workspace: string;
  let extensionDir: string;

  before(async () => {
    tmp = await createTempDir("infra-code-server");
    workspace = path.join(tmp.path, "workspace");
    extensionDir = path.join(tmp.path, "extension");
    await mkdir(workspace);
    await writeFile(path.join(workspace, "README.md"), "# infra workspace\n");
    await writeThrowawayExtension(extensionDir);
  });

  after(async () => {
    await tmp?.remove();
  });

  describe("startCodeServer", () => {
    // Started on first use, so each test also runs alone (mocha --grep).
    let server: CodeServer | undefined;
    const running = async (): Promise<CodeServer> => (server ??= await startCodeServer({ workspace }));
    after(async () => {
      await server?.stop();
    });

    it("answers /healthz and renders the workbench", async () => {
      const server = await running();
      const health = await fetch(`${server.baseUrl}/healthz`);
      assert.equal(health.status, 200);
      assert.match(await health.text(), /"status"/);

      const browser = await launchChromium();
      try {
        await browser.page.goto(server.url);
        // The explorer shows the workspace's file once the workbench and its file service are up.
        await browser.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
        await browser.page.locator(".explorer-folders-view .monaco-list-row", { hasText: "README.md" }).waitFor({ timeout: 60_000 });
        await screenshot(browser.page, "infra-code-server-workbench");
      } finally {
        await browser.close();
      }
    });

    it("stop() makes the port refuse connections", async () => {
      const { baseUrl } = await running();
      await server!.stop();
      server = undefined;
      await assert.rejects(fetch(`${baseUrl}/healthz`), /fetch failed/);
    });
  });

  describe("runExtensionTests", () => {
    it("returns 0 when the extension test module passes", async () => {
      const log: string[] = [];
      const code = await runExtensionTests({
        extensionDevelopmentPath: extensionDir,
        extensionTestsPath: path.join(extensionDir, "test", "pass.js"),
        workspace,
        onLog: (level, message) => {
          log.push(message);
          process.stdout.write(`      [vscode ${level}] ${message}\n`);
        },
      });
      assert.equal(code, 0);
      assert.ok(
        log.some((line) => line.includes("svc-infra: pass.js done")),
        "the test module's console.log did not reach codeAutomationLog",
      );
    });

    it("returns 1 when the extension test module throws", async () => {
      const log: string[] = [];
      const code = await runExtensionTests({
        extensionDevelopmentPath: extensionDir,
        extensionTestsPath: path.join(extensionDir, "test", "fail.js"),
        workspace,
        onLog: (level, message) => {
          log.push(message);
          process.stdout.write(`      [vscode ${level}] ${message}\n`);
        },
      });
      assert.equal(code, 1);
      assert.ok(
        log.some((line) => line.includes("svc-infra: deliberate failure")),
        "the assertion message did not reach codeAutomationLog",
      );
    });

    it("fails loudly when the test module never finishes", async () => {
      await assert.rejects(
        runExtensionTests({
          extensionDevelopmentPath: extensionDir,
          extensionTestsPath: path.join(extensionDir, "test", "hang.js"),
          workspace,
          timeoutMs: 15_000,
          onLog: () => undefined,
        }),
        /did not finish within 15000 ms/,
      );
    });
  });
});
