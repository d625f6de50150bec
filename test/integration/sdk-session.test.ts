import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ProjectSession } from "../../sdk/session.js";
import { writeCredentials } from "../../sdk/credentials.js";
import { MissingStateError } from "../../sdk/errors.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

/** Runs fn with SVC_HOME pointing at a fresh folder, restoring the environment after. */
async function withHome<T>(fn: (home: string) => Promise<T>): Promise<T> {
  const saved = { home: process.env.SVC_HOME, url: process.env.SVC_CLOUD_URL };
  const home = mkdtempSync(path.join(os.tmpdir(), "svc-home-"));
  process.env.SVC_HOME = home;
  try {
    return await fn(home);
  } finally {
    process.env.SVC_HOME = saved.home;
    if (saved.url === undefined) delete process.env.SVC_CLOUD_URL;
    else process.env.SVC_CLOUD_URL = saved.url;
    rmSync(home, { recursive: true, force: true });
  }
}

describe("SDK project session: credentials and state semantics", () => {
  let cloud: TestCloud;
  let projectDir: string;
  before(async () => {
    cloud = await startTestCloud();
  });
  beforeEach(() => {
    projectDir = mkdtempSync(path.join(os.tmpdir(), "svc-project-"));
  });
  afterEach(() => rmSync(projectDir, { recursive: true, force: true }));
  after(async () => cloud.dispose());

  it("mints anonymous credentials (0600) when the file is absent", () =>
    withHome(async (home) => {
      process.env.SVC_CLOUD_URL = cloud.cloudUrl;
      const session = await ProjectSession.open({ projectDir });
      const file = path.join(home, "credentials.json");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const saved = JSON.parse(readFileSync(file, "utf8"));
      assert.equal(saved.kind, "anonymous");
      assert.equal(saved.cloudUrl, cloud.cloudUrl);
      assert.equal(session.credentialKind, "anonymous");
    }));

  it("lists no deployments and makes no upstream call while the state file is absent", () =>
    withHome(async () => {
      // Credentials pointing at a closed port: any upstream call would fail with ConnectionError.
      await writeCredentials({ kind: "anonymous", cloudUrl: "http://127.0.0.1:9", token: "svc_anon_x" });
      const session = await ProjectSession.open({ projectDir });
      assert.deepEqual(await session.listDeployments(), []);
      assert.equal(existsSync(path.join(projectDir, ".svc", "state.json")), false, "listing must not create the state file");
    }));

  it("creates the state file lazily on the first scoped call, for anonymous credentials", () =>
    withHome(async () => {
      process.env.SVC_CLOUD_URL = cloud.cloudUrl;
      const session = await ProjectSession.open({ projectDir });
      const client = await session.scopedClient();
      const state = JSON.parse(readFileSync(path.join(projectDir, ".svc", "state.json"), "utf8"));
      assert.deepEqual(Object.keys(state).sort(), ["orgSlug", "projectId", "projectSlug"]);
      assert.equal(client.projectId, state.projectId);
      const me = await session.client().me();
      assert.equal(me.projects[0].id, state.projectId);
      assert.equal(me.orgs[0].slug, state.orgSlug);
      assert.deepEqual(await session.listDeployments(), []);
      // A second session reuses the file instead of creating another project.
      const again = await (await ProjectSession.open({ projectDir })).scopedClient();
      assert.equal(again.projectId, state.projectId);
      assert.equal((await session.client().me()).projects.length, 1);
    }));

  it("fails with MissingStateError telling how to write the file, for OAuth credentials", () =>
    withHome(async () => {
      await writeCredentials({ kind: "oauth", cloudUrl: cloud.cloudUrl, accessToken: "a", refreshToken: "r", expiresAt: new Date().toISOString() });
      const session = await ProjectSession.open({ projectDir });
      await assert.rejects(session.requireScope(), (err: unknown) => {
        assert.ok(err instanceof MissingStateError);
        assert.match(err.message, /Write the file by hand/);
        assert.match(err.message, /"projectId"/);
        assert.ok(err.message.includes(path.join(projectDir, ".svc", "state.json")));
        return true;
      });
      assert.equal(existsSync(path.join(projectDir, ".svc", "state.json")), false);
    }));
});
