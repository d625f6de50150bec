/**
 * Driving the VS Code workbench (code-server) with Playwright, using the selectors measured in
 * shared/VSCODE-TESTING.md. Every wait is on a visible condition, never on time.
 */
import type { FrameLocator, Page } from "playwright-core";

const QUICK_INPUT = ".quick-input-widget";

/** Runs a command by its palette title (`svc: Run Training`). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press("F1");
  const input = page.locator(`${QUICK_INPUT} input`);
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  // Click the row with exactly this label: Enter would run whatever ranks first
  // ("Preferences: Color Theme" ranks below "...Browse Color Themes in Marketplace").
  const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
  const row = page
    .locator(`${QUICK_INPUT} .monaco-list-row`)
    .filter({ has: page.locator(".label-name", { hasText: exact }) })
    .first();
  await row.waitFor({ state: "visible" });
  await row.click();
}

/** Chooses the quick-pick row containing `text`. */
export async function pick(page: Page, text: string, timeoutMs = 30_000): Promise<void> {
  const row = page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: text }).first();
  await row.waitFor({ state: "visible", timeout: timeoutMs });
  await row.click();
}

/**
 * Runs a command and picks from its quick picks in turn (`texts`: one row per pick). Under load the
 * workbench sometimes closes a freshly opened quick pick (focus moving to a webview that just
 * finished loading or refreshed); the command then sees a cancel and does nothing, so running it
 * again from the start is the faithful retry of what a person would do.
 */
export async function runCommandAndPick(page: Page, title: string, texts: string | string[], attempts = 3): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await runCommand(page, title);
    try {
      for (const text of typeof texts === "string" ? [texts] : texts) await pick(page, text, 10_000);
      return;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await page.keyboard.press("Escape");
    }
  }
}

/**
 * Types into the input box titled `title` (replacing its value) and accepts it. Waiting for the
 * title matters: a quick pick turns into the next input box in the same widget, and typing
 * before the switch would go into the old one.
 */
export async function answerInput(page: Page, title: string, text: string): Promise<void> {
  await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: title }).waitFor({ state: "visible" });
  const input = page.locator(`${QUICK_INPUT} input`);
  await input.fill(text);
  await page.keyboard.press("Enter");
}

/** The content frame of the visible webview panel (hidden, retained panels are skipped). */
export function visibleWebview(page: Page): FrameLocator {
  return page.frameLocator("iframe.webview.ready >> visible=true").frameLocator("#active-frame");
}

export async function openSvcContainer(page: Page): Promise<void> {
  await page.locator('.activitybar [aria-label^="svc"]').first().click();
  await page.locator(".pane-header", { hasText: "Jobs" }).first().waitFor({ state: "visible" });
}

/** Switches the color theme through the palette, as a user would. */
export async function setColorTheme(page: Page, theme: string): Promise<void> {
  await runCommand(page, "Preferences: Color Theme");
  // The picker lists "Light Modern" for the setting value "Default Light Modern".
  const label = theme.replace(/^Default /, "");
  // The theme list replaces the command list in the same widget: wait for it before typing.
  await page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: "Modern" }).first().waitFor({ state: "visible" });
  await page.locator(`${QUICK_INPUT} input`).fill(label);
  await page.locator(`${QUICK_INPUT} .monaco-list-row.focused`, { hasText: label }).first().waitFor({ state: "visible" });
  await page.keyboard.press("Enter");
  await page.locator(QUICK_INPUT).waitFor({ state: "hidden" });
  const dark = theme.includes("Dark");
  await page.locator(dark ? ".monaco-workbench.vs-dark" : ".monaco-workbench.vs:not(.vs-dark)").waitFor({ state: "attached" });
}

/** The modal dialog VS Code shows for `{ modal: true }` messages. */
export function dialog(page: Page) {
  return page.locator(".monaco-dialog-box");
}
