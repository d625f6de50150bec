/** A running `svc dev`: the studio URL it prints and the per-launch token its page carries. */
import assert from "node:assert/strict";
import { pollUntil } from "./poll.js";
import type { ManagedProcess } from "./processes.js";

export async function studioOf(dev: ManagedProcess, timeoutMs = 30_000): Promise<{ url: string; token: string }> {
  const url = await pollUntil(
    () =>
      dev
        .stdoutLines()
        .map((line) => /^svc studio: (http:\/\/127\.0\.0\.1:\d+)\/$/.exec(line)?.[1])
        .find(Boolean),
    {
      timeoutMs,
      description: "the studio URL line",
      abortIf: () => (dev.exitStatus() ? dev.recentOutput() : undefined),
    },
  );
  const page = await (await fetch(`${url}/`)).text();
  const token = /<meta name="svc-studio-token" content="([^"]+)"/.exec(page)?.[1];
  assert.ok(token && token !== "__SVC_STUDIO_TOKEN__", "the page carries the launch's token");
  return { url, token };
}
