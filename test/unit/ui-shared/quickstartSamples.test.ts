import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { curlSample, javascriptSample, pythonSample, quickstartSample, sdkBaseUrl, shellQuote } from "../../../ui-shared/quickstartSamples.js";

const url = "http://my-bot.localhost:7871";

/** Runs the cURL text through a real POSIX shell with `curl` replaced by a function printing its argv. */
function curlArgv(sample: string): string[] {
  const script = `curl() { for a in "$@"; do printf '%s\\0' "$a"; done; }\n${sample}\n`;
  return execFileSync("sh", ["-c", script], { encoding: "utf8" }).split("\0").slice(0, -1);
}

describe("ui-shared/quickstartSamples", () => {
  it("fixed_api_key cURL carries the bearer placeholder and runs as displayed", () => {
    const sample = curlSample({ url, authMode: "fixed_api_key", model: "my-bot" });
    assert.ok(sample.includes(`-H "Authorization: Bearer YOUR_API_KEY"`));
    const argv = curlArgv(sample);
    assert.equal(argv[0], "http://my-bot.localhost:7871/v1/chat/completions");
    assert.ok(argv.includes("Authorization: Bearer YOUR_API_KEY"));
    const body = JSON.parse(argv[argv.indexOf("-d") + 1]);
    assert.equal(body.messages[0].role, "user");
  });

  it("none drops the header from cURL", () => {
    const sample = curlSample({ url, authMode: "none", model: "my-bot" });
    assert.ok(!sample.includes("Authorization"));
    assert.ok(curlArgv(sample).includes("Content-Type: application/json"));
  });

  it("SDK samples use <url>/v1 as base URL, never the operation URL", () => {
    for (const sample of [pythonSample({ url, authMode: "fixed_api_key", model: "m" }), javascriptSample({ url, authMode: "fixed_api_key", model: "m" })]) {
      assert.ok(sample.includes(`"http://my-bot.localhost:7871/v1"`));
      assert.ok(!sample.includes("/v1/chat/completions"));
    }
    assert.equal(sdkBaseUrl("http://x/d/slug/"), "http://x/d/slug/v1");
  });

  it("SDK samples carry YOUR_API_KEY or a not-required placeholder", () => {
    assert.ok(pythonSample({ url, authMode: "fixed_api_key", model: "m" }).includes(`api_key="YOUR_API_KEY"`));
    assert.ok(javascriptSample({ url, authMode: "fixed_api_key", model: "m" }).includes(`apiKey: "YOUR_API_KEY"`));
    const py = pythonSample({ url, authMode: "none", model: "m" });
    const js = javascriptSample({ url, authMode: "none", model: "m" });
    assert.ok(py.includes(`api_key="not-required"`) && !py.includes("YOUR_API_KEY"));
    assert.ok(js.includes(`apiKey: "not-required"`) && !js.includes("YOUR_API_KEY"));
  });

  it("the JavaScript sample is valid module syntax", () => {
    const js = javascriptSample({ url, authMode: "none", model: "m" }).replace('import OpenAI from "openai";', "const OpenAI = class {};");
    assert.doesNotThrow(() => new Function(`return async () => { ${js} }`));
  });

  it("quotes anything for the shell", () => {
    assert.deepEqual(curlArgv(`curl ${shellQuote(`it's $HOME "x"`)}`), [`it's $HOME "x"`]);
    assert.equal(quickstartSample("curl", { url, authMode: "none", model: "m" }), curlSample({ url, authMode: "none", model: "m" }));
  });
});
