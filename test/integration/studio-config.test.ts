/**
 * The studio takes the cloud URL as configuration (issue 11 item 5): hosted in VS Code's extension host it must not
 * rely on, or write, that process's environment. With no SVC_CLOUD_URL anywhere and no credentials, the studio's
 * first credentials call mints at the configured cloud, and the process environment is left as it was.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createStudioServer, type StudioServer } from "../../studio/index.js";
import { TOKEN_HEADER } from "../../studio/guard.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

describe("studio configuration: the cloud URL is an option, not process.env", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let studio: StudioServer | undefined;
  let home: string;
  const saved = { home: process.env.SVC_HOME, url: process.env.SVC_CLOUD_URL };

  before(async () => {
    cloud = await startTestCloud();
    home = mkdtempSync(path.join(os.tmpdir(), "svc-studio-config-"));
    process.env.SVC_HOME = home;
    delete process.env.SVC_CLOUD_URL;
  });
  after(async () => {
    await studio?.close();
    if (saved.home === undefined)
      delete process.env.SVC_HOME; // assigning undefined would store "undefined"
    else process.env.SVC_HOME = saved.home;
    if (saved.url === undefined) delete process.env.SVC_CLOUD_URL;
    else process.env.SVC_CLOUD_URL = saved.url;
    rmSync(home, { recursive: true, force: true });
    await cloud?.dispose();
  });

  it("mints credentials at the configured cloud and leaves SVC_CLOUD_URL unset", async () => {
    const projectDir = path.join(home, "project");
    mkdirSync(projectDir);
    studio = await createStudioServer({ projectDir, host: "127.0.0.1", port: 0, cloudUrl: `${cloud.cloudUrl}/` });
    const res = await fetch(`${studio.url}/api/credentials`, { method: "POST", headers: { [TOKEN_HEADER]: studio.token } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { kind: "anonymous", cloudUrl: cloud.cloudUrl, minted: true });
    assert.equal(JSON.parse(readFileSync(path.join(home, "credentials.json"), "utf8")).cloudUrl, cloud.cloudUrl);
    assert.equal(process.env.SVC_CLOUD_URL, undefined);
  });
});
