/** Small page helpers for the studio's browser tests: routes, screenshots in both themes, console watch. */
import type { Page } from "playwright-core";
import { screenshot } from "../../../support/chromium.js";

export async function openRoute(page: Page, baseUrl: string, hash: string): Promise<void> {
  if (page.url().startsWith(baseUrl)) await page.evaluate((h) => (location.hash = h), hash);
  else await page.goto(`${baseUrl}/${hash}`);
}

/** `<name>-light.png` and `<name>-dark.png` in test-results/screenshots/ (the themes follow prefers-color-scheme). */
export async function screenshotBothThemes(page: Page, name: string): Promise<void> {
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    await screenshot(page, `studio-${name}-${colorScheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/** Collects console errors and page errors so a test can assert the UI ran clean (CSP included). */
export function watchConsole(page: Page): { errors: string[]; failedRequests: string[] } {
  const errors: string[] = [];
  const failedRequests: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${message.text()} @ ${message.location().url}`);
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  return { errors, failedRequests };
}

/** Number of vertices of an SVG path `d` (M/L commands), i.e. chart points after decimation. */
export function pathVertexCount(d: string | null): number {
  return d ? (d.match(/[ML]/g) ?? []).length : 0;
}
