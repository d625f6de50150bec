// Headless Debian Chromium driven by playwright-core. Playwright's own browser download cannot
// work here (no network but the npm registry), so we point it at /usr/bin/chromium, installed
// by scripts/setup-system.sh.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { pollUntil } from "./poll.js";
import { createTempDir } from "./tmp.js";

export const CHROMIUM_PATH = process.env.SVC_CHROMIUM_PATH ?? "/usr/bin/chromium";

// The machine has no outside network: without the background-networking flags Chromium keeps
// trying Google's services and floods the log with refused connections. --no-sandbox because
// tests run as root, where Chromium's sandbox refuses to start.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
] as const;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SCREENSHOT_DIR = path.join(REPO_ROOT, "test-results", "screenshots");

export interface ChromiumSession {
  readonly context: BrowserContext;
  /** The tab the persistent context opens with. */
  readonly page: Page;
  /** The throwaway Chromium profile (--user-data-dir); gone after close(). */
  readonly profileDir: string;
  /** Closes the browser and deletes its profile folder. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  viewport?: { width: number; height: number };
}

/**
 * Starts Chromium with a fresh, empty profile (a persistent context on a new temp dir, so no
 * state leaks between tests and nothing is read from ~/.config/chromium).
 */
export async function launchChromium({ viewport = { width: 1280, height: 800 } }: LaunchOptions = {}): Promise<ChromiumSession> {
  const profile = await createTempDir("chromium-profile");
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile.path, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport,
    });
  } catch (err) {
    await profile.remove();
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  let closed = false;
  return {
    context,
    page,
    profileDir: profile.path,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        await profile.remove();
      }
    },
  };
}

/**
 * Saves a full-page PNG as test-results/screenshots/<name>.png (kept as a test artifact) and
 * returns its path. `name` may contain only letters, digits, dots, dashes and underscores.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`screenshot name "${name}" must match [\\w.-]+`);
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, name.endsWith(".png") ? name : `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Waits until the element's text is `expected`, failing with what it last read. For text a page
 * fills from a fetch that can land after what the test waited for (a stream event, a chart).
 */
export async function waitForText(locator: Locator, expected: string, timeoutMs = 10_000): Promise<void> {
  let last: string | null = null;
  try {
    await pollUntil(
      async () => {
        last = await locator.textContent({ timeout: 1000 }).catch(() => null);
        return last === expected;
      },
      { timeoutMs, description: `text ${JSON.stringify(expected)}` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; the element last read ${JSON.stringify(last)}`);
  }
}
