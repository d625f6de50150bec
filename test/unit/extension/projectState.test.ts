import assert from "node:assert/strict";
import { canReachCloud, manifestProblem, projectState, type ProjectFacts } from "../../../extension/core/projectState.js";

describe("extension/core/projectState", () => {
  const ready: ProjectFacts = { folder: "/ws", hasTrainerSource: true, hasCli: true, hasCredentials: true, manifest: { status: "ok", trainer: { name: "t" } } };

  it("walks the setup steps in the order a new user meets them", () => {
    assert.equal(projectState({ ...ready, folder: undefined }), "noFolder");
    assert.equal(projectState({ ...ready, hasTrainerSource: false, hasCli: false }), "noProject");
    assert.equal(projectState({ ...ready, hasCli: false, hasCredentials: false }), "noCli");
    assert.equal(projectState({ ...ready, hasCredentials: false }), "noCredentials");
    assert.equal(projectState({ ...ready, manifest: { status: "none" } }), "noTrainer");
    assert.equal(projectState({ ...ready, manifest: { status: "error", error: "boom" } }), "noTrainer");
    assert.equal(projectState(ready), "ready");
  });

  it("is ready while the manifest is still unknown (it comes from a subprocess)", () => {
    assert.equal(projectState({ ...ready, manifest: undefined }), "ready");
  });

  it("lets the trees call the cloud only when nothing would have to be minted", () => {
    assert.equal(canReachCloud("ready"), true);
    assert.equal(canReachCloud("noTrainer"), true);
    assert.equal(canReachCloud("noCredentials"), false);
    assert.equal(canReachCloud("noCli"), false);
  });

  it("words manifest problems as SPEC section 4 does", () => {
    assert.equal(manifestProblem({ status: "none" }), "No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.");
    assert.equal(manifestProblem({ status: "error", error: "x is not defined" }), "Couldn't read manifest: x is not defined");
    assert.equal(manifestProblem({ status: "ok", trainer: { name: "t" } }), undefined);
  });
});
