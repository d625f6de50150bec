import assert from "node:assert/strict";
import { isAllowedHost, tokenMatches } from "../../../studio/guard.js";
import { parseManifestOutput } from "../../../studio/manifest.js";
import { injectToken, TOKEN_PLACEHOLDER } from "../../../studio/staticAssets.js";

describe("studio guard", () => {
  it("allows only loopback names with the studio's port", () => {
    for (const host of ["127.0.0.1:7860", "localhost:7860", "LOCALHOST:7860", "[::1]:7860"]) assert.equal(isAllowedHost(host, 7860), true, host);
    for (const host of [
      undefined,
      "",
      "127.0.0.1",
      "127.0.0.1:7861",
      "evil.example:7860",
      "127.0.0.1.nip.io:7860",
      "sub.localhost:7860",
      "[::2]:7860",
      "127.0.0.1:7860:1",
    ]) {
      assert.equal(isAllowedHost(host, 7860), false, String(host));
    }
  });

  it("compares tokens exactly", () => {
    assert.equal(tokenMatches("abc", "abc"), true);
    assert.equal(tokenMatches("abd", "abc"), false);
    assert.equal(tokenMatches("ab", "abc"), false);
    assert.equal(tokenMatches(undefined, "abc"), false);
  });
});

describe("studio manifest output", () => {
  it("takes the JSON line of svc manifest --json", () => {
    assert.deepEqual(parseManifestOutput('{"status":"ok","trainer":{"name":"t"}}\n', "", 0), { status: "ok", trainer: { name: "t" } });
    assert.deepEqual(parseManifestOutput('{"status":"error","error":"boom"}\n', "", 1), { status: "error", error: "boom" });
  });

  it("falls back to the first stderr line, then to the exit code", () => {
    assert.deepEqual(parseManifestOutput("", 'svc: unknown command "manifest"\n\nusage…', 2), { status: "error", error: 'unknown command "manifest"' });
    assert.deepEqual(parseManifestOutput("", "", 137), { status: "error", error: "svc manifest exited with code 137" });
  });
});

describe("studio index.html", () => {
  it("replaces every placeholder with the token", () => {
    assert.equal(injectToken(`<meta content="${TOKEN_PLACEHOLDER}">${TOKEN_PLACEHOLDER}`, "t0k"), '<meta content="t0k">t0k');
    assert.throws(() => injectToken("<html></html>", "t"), /placeholder/);
  });
});
