/**
 * Loads oidc-provider on demand. Two reasons it is not a static import:
 * - every `svc` command bundles cloud/serve.ts, and only `svc cloud serve` needs the provider;
 * - on import, oidc-provider 9 warns "Unsupported runtime" on any Node older than 22. We run on
 *   Node 20 (DESIGN.md section 4): the APIs it needs there (URL.parse, crypto.hash) exist since
 *   Node 20.18, and test/integration/oauth.test.ts runs the whole device flow on Node 20. That one
 *   line is dropped so it does not reach the daemon's log or every CLI user's terminal; any other
 *   warning still goes through.
 */
import type { Provider } from "oidc-provider";

const RUNTIME_WARNING = "oidc-provider WARNING: Unsupported runtime";

let loading: Promise<typeof Provider> | undefined;

export function importProvider(): Promise<typeof Provider> {
  return (loading ??= (async () => {
    if (typeof (URL as { parse?: unknown }).parse !== "function") {
      throw new Error(`the OAuth provider needs Node 20.18 or later (this is ${process.version})`);
    }
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes(RUNTIME_WARNING)) return;
      warn(...args);
    };
    try {
      return (await import("oidc-provider")).default;
    } finally {
      console.warn = warn;
    }
  })());
}
