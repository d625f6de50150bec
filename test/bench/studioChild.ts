/** The studio as its own process for studio.bench.ts (benchProcesses.ts): prints `{url, token}` once listening. */
import { createStudioServer } from "../../studio/index.js";

const studio = await createStudioServer({ projectDir: process.argv[2], host: "127.0.0.1", port: 0 });
process.stdout.write(`${JSON.stringify({ url: studio.url, token: studio.token })}\n`);
process.once("SIGTERM", () => void studio.close().finally(() => process.exit(0)));
