/**
 * The studio in a real browser (playwright-core + Debian Chromium) against the real studio server,
 * a real cloud with one training worker, and real training of a copy of examples/quickstart.
 * Screenshots of every page, light and dark, go to test-results/screenshots/studio-*.png.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import type { Deployment } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, pathVertexCount, screenshotBothThemes, watchConsole } from "./support/pages.js";
import {
  BROKEN_SOURCE,
  NO_TRAINER_SOURCE,
  projectClient,
  startStudioStack,
  studioRequest,
  trainThroughStudio,
  writeProject,
  type StudioStack,
} from "../../support/studioStack.js";

const run = promisify(execFile);

describe("studio in the browser", function () {
  this.timeout(180_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  // What several tests need, made once on first use: by the UI test that covers it where that one
  // ran (the normal order), otherwise through the studio's API, so any test also runs alone (--grep).
  let completedJob: Promise<string> | undefined;
  let endpoint: Promise<Deployment> | undefined;
  let issuedKey: Promise<string> | undefined;

  before(async () => {
    // 40 steps: long enough (about 10 s here) to watch the chart fill while the job runs.
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1, maxSteps: 40 }), launchChromium()]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const ensureCompletedJob = () => (completedJob ??= trainThroughStudio(stack.studio, 90_000).then((job) => job.id));

  async function createEndpointThroughStudio(): Promise<Deployment> {
    const jobId = await ensureCompletedJob();
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", { body: { slug: "e2e-bot", target: { kind: "adapter", jobId } } });
    assert.equal(created.status, 201, created.text);
    return created.json as Deployment;
  }
  const ensureEndpoint = () => (endpoint ??= createEndpointThroughStudio());

  async function issueKeyThroughStudio(): Promise<string> {
    const deployment = await ensureEndpoint();
    const created = await studioRequest(stack.studio, "POST", `/api/deployments/${deployment.id}/keys`, { body: { label: "e2e key" } });
    assert.equal(created.status, 201, created.text);
    return (created.json as { key: string }).key;
  }
  const ensureIssuedKey = () => (issuedKey ??= issueKeyThroughStudio());

  it("Overview: runs training and the job page fills the chart live", async () => {
    await page.goto(`${stack.studio.url}/#/`);
    const label = page.getByTestId("run-training-label");
    await label.getByText("Run training: quickstart-json-answers", { exact: true }).waitFor();
    await screenshotBothThemes(page, "overview");

    await page.locator("vscode-button", { hasText: "Run training" }).click();
    const consoleText = page.getByLabel("Training output");
    await consoleText.getByText(/job \S+ queued/).waitFor({ timeout: 60_000 });
    const jobId = /job (\S+) queued/.exec((await consoleText.textContent()) ?? "")![1]!;
    await screenshotBothThemes(page, "overview-running");

    await openRoute(page, stack.studio.url, `#/jobs/${jobId}`);
    const lossPath = page.locator('path[data-series="loss"]');
    const status = page.getByTestId("job-status");
    // Two readings of the chart, both while the job is still running: the second has more points.
    const firstCount = await pollUntil(
      async () => {
        const n = pathVertexCount(await lossPath.getAttribute("d", { timeout: 100 }).catch(() => null));
        return n > 0 ? n : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, description: "the first chart points" },
    );
    assert.match((await status.textContent()) ?? "", /running/i, "the first points arrived while the job runs");
    const laterCount = await pollUntil(
      async () => {
        const n = pathVertexCount(await lossPath.getAttribute("d"));
        return n > firstCount ? n : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, description: "the chart to gain points" },
    );
    assert.ok(laterCount > firstCount);
    await screenshotBothThemes(page, "job-running");

    await status.getByText(/completed/i).waitFor({ timeout: 90_000 });
    await page.getByTestId("eval-legend").waitFor();
    await pollUntil(async () => ((await page.getByTestId("artifact-count").textContent())?.trim() !== "—" ? true : undefined), {
      timeoutMs: 10_000,
      description: "the artifact count",
    });
    assert.equal(pathVertexCount(await lossPath.getAttribute("d")), 40, "one vertex per training step");
    await page.getByRole("button", { name: "Advanced" }).click();
    await page.locator("#advanced-stats").waitFor();
    // Hover the middle of the chart so the screenshot shows the readout.
    const box = (await page.locator("svg.plot").boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await screenshotBothThemes(page, "job-completed");
    completedJob ??= Promise.resolve(jobId);
  });

  it("Jobs: search and status chips", async () => {
    const jobId = await ensureCompletedJob();
    const client = projectClient(stack);
    // A second job that never trains: cancelled at once (or failed, if the worker got to it
    // first and found no dataset). Either way it is terminal and not "completed".
    const extra = await client.createJob({ name: "Search-Target-Alpha", config: { maxSteps: 1 } });
    await client.cancelJob(extra.id).catch(() => undefined);
    const extraStatus = await pollUntil(
      async () => {
        const status = (await client.getJob(extra.id)).status;
        return status === "cancelled" || status === "failed" ? status : undefined;
      },
      { timeoutMs: 30_000, description: "the extra job to end" },
    );
    const extraChip = extraStatus === "cancelled" ? "Cancelled" : "Failed";

    await openRoute(page, stack.studio.url, "#/jobs");
    const rows = page.locator("tr[data-job-id]");
    const refresh = page.locator("vscode-button", { hasText: "Refresh" });
    await refresh.click();
    await pollUntil(async () => ((await rows.count()) === 2 ? true : undefined), { timeoutMs: 10_000, description: "two job rows" });
    await screenshotBothThemes(page, "jobs");

    const search = page.locator("vscode-textfield.search input");
    await search.fill("search-target");
    await pollUntil(async () => ((await rows.count()) === 1 ? true : undefined), { timeoutMs: 5000, description: "one row for the name search" });
    assert.equal(await rows.first().getAttribute("data-job-id"), extra.id);
    await search.fill(jobId.slice(0, 8).toUpperCase()); // id search, case-insensitive
    await pollUntil(async () => ((await rows.count()) === 1 ? true : undefined), { timeoutMs: 5000, description: "one row for the id search" });
    assert.equal(await rows.first().getAttribute("data-job-id"), jobId);

    const chip = (name: string) => page.locator("button.chip", { hasText: name });
    await chip(extraChip).click();
    await page.getByText("No matches", { exact: true }).waitFor();
    await screenshotBothThemes(page, "jobs-no-matches");
    await search.fill("");
    await pollUntil(async () => ((await rows.count()) === 1 ? true : undefined), { timeoutMs: 5000, description: "the cancelled job only" });
    assert.equal(await rows.first().getAttribute("data-job-id"), extra.id);
    assert.deepEqual(await page.locator("button.chip[aria-pressed=true]").allTextContents(), [extraChip], "exactly one chip is active");
    await chip("Completed").click();
    assert.equal(await rows.first().getAttribute("data-job-id"), jobId);
    await chip("Running").click();
    await page.getByText("No matches", { exact: true }).waitFor();
    await chip("All").click();
    await pollUntil(async () => ((await rows.count()) === 2 ? true : undefined), { timeoutMs: 5000, description: "all rows again" });
  });

  it("Endpoints: create, 409 on a duplicate slug in red with the form still open", async () => {
    const jobId = await ensureCompletedJob();
    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.getByText("No endpoints yet").waitFor();
    await screenshotBothThemes(page, "endpoints-empty");
    const createEndpoint = async (slug: string) => {
      await page.locator("vscode-button", { hasText: "New endpoint" }).click();
      await page.locator('input[name="slug"]').fill(slug);
      // The first completed job is preselected as the final-adapter target.
      await pollUntil(async () => ((await page.getByLabel("Completed job").inputValue()) === jobId ? true : undefined), {
        timeoutMs: 10_000,
        description: "the job in the target picker",
      });
      await page.locator('vscode-button[type="submit"]').click();
    };
    await createEndpoint("e2e-bot");
    await page.waitForURL(/#\/endpoints\/[\w-]+$/);
    const deployment: Deployment = (await studioRequest(stack.studio, "GET", "/api/deployments")).json[0];
    endpoint ??= Promise.resolve(deployment);
    assert.equal(deployment.slug, "e2e-bot");
    assert.deepEqual(deployment.target, { kind: "adapter", jobId });

    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.locator(`li[data-deployment-id="${deployment.id}"]`).waitFor();
    await createEndpoint("e2e-bot");
    const error = page.getByTestId("create-error");
    await error.waitFor();
    assert.equal(await error.textContent(), 'The slug "e2e-bot" is already taken. Choose another slug.');
    const color = await error.evaluate((el) => getComputedStyle(el).color);
    const [r, g, b] = color.match(/\d+/g)!.map(Number);
    assert.ok(r! > 150 && g! < 120 && b! < 120, `the error is red (${color})`);
    assert.ok(await page.getByRole("heading", { name: "New endpoint" }).isVisible(), "the form stays open");
    assert.equal(await page.locator('input[name="slug"]').inputValue(), "e2e-bot");
    await screenshotBothThemes(page, "endpoints-409");
    await page.locator("vscode-button", { hasText: "Cancel" }).click();
    await screenshotBothThemes(page, "endpoints");
  });

  it("Endpoint detail: issue a key (plaintext once), toggle enabled", async () => {
    const deployment = await ensureEndpoint();
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
    await page.getByTestId("quickstart-code").waitFor();
    await page.locator('input[name="label"]').fill("e2e key");
    await page.locator("vscode-button", { hasText: "Issue key" }).click();
    const plaintext = page.getByTestId("issued-key-plaintext");
    await plaintext.waitFor();
    const plaintextKey = (await plaintext.textContent())!.trim();
    issuedKey ??= Promise.resolve(plaintextKey);
    assert.match(plaintextKey, /^svc_live_[0-9A-Za-z]+$/);
    const keyRow = page.locator("tr[data-key-id]");
    await keyRow.waitFor();
    const prefix = (await keyRow.locator("td.mono").textContent())!.replace("…", "");
    assert.ok(plaintextKey.startsWith(prefix) && prefix.length >= 8, prefix);
    await plaintext.scrollIntoViewIfNeeded(); // the shell scrolls inside <main>, so a full-page shot would miss it
    await screenshotBothThemes(page, "endpoint-key-issued");
    await page.locator("vscode-button", { hasText: "Done" }).click();
    await plaintext.waitFor({ state: "detached" });
    assert.equal(await page.getByText(plaintextKey).count(), 0, "the plaintext is shown only once");

    const toggle = page.getByRole("switch", { name: "Enabled" });
    const badge = page.getByTestId("enabled-badge");
    await toggle.click();
    await badge.getByText("disabled", { exact: true }).waitFor();
    assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${deployment.id}`)).json.enabled, false);
    await screenshotBothThemes(page, "endpoint-disabled");
    await toggle.click();
    await badge.getByText("enabled", { exact: true }).waitFor();
    assert.equal(await toggle.getAttribute("aria-checked"), "true");
    assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${deployment.id}`)).json.enabled, true);
    await screenshotBothThemes(page, "endpoint");
  });

  // The edge (cloud/edge) is being built in parallel; see the report for when these were last run.
  describe("through the edge", () => {
    async function curlAsDisplayed(key: string): Promise<{ status: number; body: string }> {
      await page.getByRole("tab", { name: "cURL" }).click();
      const sample = (await page.getByTestId("quickstart-code").textContent())!;
      // Exactly the displayed command, the user's only edit being the key; -w adds the status line.
      const command = `${sample.replace("YOUR_API_KEY", key)} -sS -w '\\n%{http_code}'`;
      const { stdout } = await run("sh", ["-c", command], { timeout: 30_000 });
      const lines = stdout.trimEnd().split("\n");
      return { status: Number(lines.pop()), body: lines.join("\n") };
    }

    /** The endpoint's page with its key issued and listed. */
    async function openEndpointWithKey(): Promise<string> {
      const [deployment, key] = await Promise.all([ensureEndpoint(), ensureIssuedKey()]);
      await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
      await page.getByTestId("quickstart-code").waitFor();
      await page.locator("tr[data-key-id]").first().waitFor();
      return key;
    }

    it("the Quick start cURL works exactly as displayed with the issued key", async () => {
      const key = await openEndpointWithKey();
      const { status, body } = await curlAsDisplayed(key);
      assert.equal(status, 200, body);
      const completion = JSON.parse(body);
      assert.equal(completion.object, "chat.completion");
      assert.equal(typeof completion.choices[0].message.content, "string");
    });

    it("revoking the key in the UI makes the same call fail", async () => {
      const key = await openEndpointWithKey();
      await page.getByRole("button", { name: "Revoke key e2e key" }).click();
      await page.locator(".confirm vscode-button").first().click(); // the confirmation's "Revoke"
      await page.locator("tr.revoked").waitFor();
      // The edge applies a revocation within its documented bound (DESIGN.md 7: at most 1 s).
      const refused = await pollUntil(
        async () => {
          const result = await curlAsDisplayed(key);
          return result.status === 401 ? result : undefined;
        },
        { timeoutMs: 5000, intervalMs: 200, description: "the edge to refuse the revoked key" },
      );
      assert.equal(JSON.parse(refused.body).error.type !== undefined, true);
      await screenshotBothThemes(page, "endpoint-key-revoked");
    });
  });

  it("Playground renders", async () => {
    await openRoute(page, stack.studio.url, "#/playground");
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await screenshotBothThemes(page, "playground");
  });

  it("Run training panel texts for a project without a trainer and for a broken build", async () => {
    const none = await stack.studioFor(writeProject(stack.tmp.path, "empty", NO_TRAINER_SOURCE));
    const broken = await stack.studioFor(writeProject(stack.tmp.path, "broken", BROKEN_SOURCE));
    const label = page.getByTestId("run-training-label");
    const runButton = page.locator("vscode-button", { hasText: "Run training" });

    await page.goto(`${none.url}/#/`);
    await label.getByText("No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.", { exact: true }).waitFor();
    assert.equal(await runButton.getAttribute("disabled"), "");
    await screenshotBothThemes(page, "overview-no-trainer");

    const manifest = (await studioRequest(broken, "GET", "/api/manifest")).json as { error: string };
    await page.goto(`${broken.url}/#/`);
    await label.getByText(`Couldn't read manifest: ${manifest.error}`, { exact: true }).waitFor();
    assert.equal(await runButton.getAttribute("disabled"), "");
    await screenshotBothThemes(page, "overview-manifest-error");

    await page.goto(`${none.url}/#/jobs`);
    await page.getByText("No jobs yet", { exact: true }).waitFor();
    await screenshotBothThemes(page, "jobs-empty");
  });

  it("CSRF: a request without the studio token gets 403", async () => {
    await page.goto(`${stack.studio.url}/#/`);
    const result = await page.evaluate(async () => {
      const res = await fetch("/api/deployments", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ slug: "csrf", target: { kind: "base_model", name: "svc-tiny" } }),
      });
      return { status: res.status, body: await res.json() };
    });
    assert.equal(result.status, 403);
    assert.equal(result.body.error.code, "invalid_studio_token");
    // From another origin the token header needs a preflight, which the studio never answers.
    await page.goto(`${stack.cloud.cloudUrl}/healthz`);
    const crossOrigin = await page.evaluate(
      async ({ url, token }) => {
        try {
          await fetch(`${url}/api/jobs`, { headers: { "X-Svc-Studio-Token": token } });
          return "answered";
        } catch (error) {
          return String(error);
        }
      },
      { url: stack.studio.url, token: stack.studio.token },
    );
    assert.match(crossOrigin, /TypeError/);
  });

  it("Host guard: the studio under a foreign host name gets 403", async () => {
    // Chromium resolves *.localhost to loopback, like a DNS-rebinding name pointing at 127.0.0.1.
    const response = await page.goto(`http://rebound.localhost:${stack.studio.port}/`);
    assert.equal(response?.status(), 403);
    assert.ok(!(await page.content()).includes(stack.studio.token));
    const api = await page.evaluate(async () => (await fetch("/api/jobs")).status);
    assert.equal(api, 403);
  });

  // A nested suite runs after every test above, the edge ones included.
  describe("afterwards", () => {
    it("ran without script errors or CSP violations", () => {
      // Expected: the deliberate 403s, the 409 of the duplicate slug, the refused cross-origin fetch.
      // Messages of the cloud's own page (its favicon 404) are not the studio's.
      const expected = /status of (403|409)|Failed to fetch|CORS policy|net::ERR_FAILED/;
      const studioErrors = consoleWatch.errors.filter((text) => !expected.test(text) && !text.includes(`@ ${stack.cloud.cloudUrl}`));
      assert.deepEqual(studioErrors, [], `failed requests: ${consoleWatch.failedRequests.join(", ")}`);
    });
  });
});
