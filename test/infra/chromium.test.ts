// Proves launchChromium() drives the real Debian Chromium: it renders a page served on loopback,
// screenshot() writes a real PNG, and close() deletes the throwaway profile.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { launchChromium, screenshot, type ChromiumSession } from "../support/chromium.js";

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe("infra: headless Chromium", () => {
  let server: http.Server;
  let baseUrl: string;
  let browser: ChromiumSession | undefined;

  before(async () => {
    server = http.createServer((req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      // The heading text is computed by script, so the assertion also proves JavaScript ran.
      res.end(`<!doctype html><title>infra</title><body style="font-family:sans-serif">
        <h1 id="greeting"></h1><p>served from ${req.url}</p>
        <script>document.getElementById('greeting').textContent = 'rendered ' + (6 * 7);</script>`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it("renders a local page and writes a PNG screenshot", async () => {
    browser = await launchChromium();
    await browser.page.goto(`${baseUrl}/hello`);
    assert.equal(await browser.page.locator("#greeting").textContent(), "rendered 42");

    const file = await screenshot(browser.page, "infra-chromium");
    const bytes = await readFile(file);
    assert.ok(bytes.length > 1000, `screenshot is only ${bytes.length} bytes`);
    assert.deepEqual(bytes.subarray(0, 8), PNG_SIGNATURE, "screenshot is not a PNG");
  });

  it("deletes its profile folder on close", async () => {
    browser ??= await launchChromium();
    const { profileDir } = browser;
    assert.ok(existsSync(profileDir), "profile folder missing while the browser runs");
    await browser.close();
    browser = undefined;
    assert.equal(existsSync(profileDir), false, `${profileDir} still exists after close()`);
  });
});
