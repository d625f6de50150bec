/**
 * The API contract (sdk/api/) makes a route that one side lacks a type error, not a runtime surprise. Each case below
 * is a small program with one defect, type-checked by TypeScript itself next to the real tree; each must fail with the
 * expected message, and the same program without its defect must compile (so the error comes from the defect).
 */
import assert from "node:assert/strict";
import path from "node:path";
import ts from "typescript";
import { repoRoot } from "../../support/cloud.js";

const HEADER = `
import type { FastifyInstance } from "fastify";
import { jobsApi } from "../../../sdk/api/jobs.js";
import { relay, route, type RouteMethods } from "../../../sdk/api/route.js";
import { studioApi, studioDownloads, type StudioApi } from "../../../sdk/api/studio.js";
import { CloudClient } from "../../../sdk/client.js";
import { serveRoutes, type RouteHandlers } from "../../../server-shared/serveRoute.js";
import type { Transport } from "../../../ui-shared/transport.js";
import type { ApiRequests, PanelRequests } from "../../../ui-shared/protocol/common.js";
declare const app: FastifyInstance;
declare const studioHandlers: RouteHandlers<StudioApi>;
declare const transport: Transport;
declare const client: CloudClient;
export {};
`;

/** Each `defect` breaks its `good` program; the expected error names what is missing or wrong. */
const CASES: { name: string; good: string; defect: string; error: RegExp }[] = [
  {
    name: "a studio route with no handler",
    good: `serveRoutes(app, studioApi, studioHandlers);`,
    defect: `const { revokeKey, ...rest } = studioHandlers; serveRoutes(app, studioApi, rest);`,
    error: /Property 'revokeKey' is missing/,
  },
  {
    name: "a route added to the studio's declaration that the server does not answer",
    good: `serveRoutes(app, studioApi, studioHandlers);`,
    defect: `serveRoutes(app, { ...studioApi, renameJob: route({ method: "POST", path: "/api/jobs/:id/rename" }) }, studioHandlers);`,
    error: /Property 'renameJob' is missing/,
  },
  {
    name: "a UI transport without one of the studio's routes",
    good: `const copy: Transport = { ...transport };`,
    defect: `const { listKeys, ...rest } = transport; const copy: Transport = rest;`,
    error: /Property 'listKeys' is missing/,
  },
  {
    name: "a handler answering something other than the declared response",
    good: `serveRoutes(app, jobsApi, { ...({} as RouteHandlers<typeof jobsApi>), getJob: async () => client.getJob("j1") });`,
    defect: `serveRoutes(app, jobsApi, { ...({} as RouteHandlers<typeof jobsApi>), getJob: async () => ({ id: 1 }) });`,
    error: /not assignable/,
  },
  {
    name: "a client call with the wrong arguments",
    good: `void client.createDeploymentKey("d1", { label: "ci" }); void transport.issueKey("d1", "ci");`,
    defect: `void transport.issueKey("d1");`,
    error: /Expected 2-3 arguments, but got 1/,
  },
  {
    name: "a relay whose path names other parameters",
    good: `relay(jobsApi.getJob, "/api/jobs/:id");`,
    defect: `relay(jobsApi.getJob, "/api/jobs/:jobId");`,
    error: /parameter of type 'never'/,
  },
  {
    name: "a panel request with params the route does not take",
    good: `const params: ApiRequests["api/updateDeployment"]["params"] = { id: "d1", body: { enabled: false } };`,
    defect: `const params: ApiRequests["api/updateDeployment"]["params"] = { id: "d1", patch: { enabled: false } };`,
    error: /'patch' does not exist/,
  },
  {
    name: "a panel's request list naming a request the contract lacks",
    good: `type Panel = PanelRequests<"api/getJob" | "host/openJob">;`,
    defect: `type Panel = PanelRequests<"api/getJob" | "api/renameJob">;`,
    error: /does not satisfy the constraint/,
  },
  {
    name: "a JSON method for a route that answers a file (its body is read by hand, so it gets none)",
    good: `const json: RouteMethods<typeof studioApi> = transport; void json.listJobs(); void transport.saveDownload({ route: "downloadAdapter", params: { id: "j1" }, query: { format: "peft", step: 20 } });`,
    defect: `declare const files: RouteMethods<typeof studioDownloads>; void files.downloadAdapter("j1");`,
    error: /Property 'downloadAdapter' does not exist/,
  },
  {
    name: "a download with a query its route does not take",
    good: `void transport.saveDownload({ route: "downloadAdapter", params: { id: "j1" }, query: { format: "gguf" } });`,
    defect: `void transport.saveDownload({ route: "downloadAdapter", params: { id: "j1" }, query: { format: "onnx" } });`,
    error: /"onnx"' is not assignable/,
  },
];

/** Type-checks in-memory files beside this test (so their relative imports reach the real tree); diagnostics per file. */
function typeCheck(files: Record<string, string>): Map<string, string[]> {
  const configFile = ts.readConfigFile(path.join(repoRoot, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, repoRoot);
  const dir = path.join(repoRoot, "test/unit/architecture");
  const memory = new Map(Object.entries(files).map(([name, text]) => [path.join(dir, name), text]));
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile } = host;
  host.fileExists = (file) => memory.has(file) || fileExists(file);
  host.readFile = (file) => memory.get(file) ?? readFile(file);
  const program = ts.createProgram([...memory.keys()], { ...options, noEmit: true }, host);
  const messages = (file: string) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  return new Map([...memory.keys()].map((file) => [path.basename(file), messages(file)]));
}

describe("architecture: one contract for the API (sdk/api/)", function () {
  this.timeout(180_000);

  it("a route missing from one side, or used against its declaration, is a type error", () => {
    const files: Record<string, string> = {};
    CASES.forEach((c, i) => {
      files[`contract-case-${i}-good.ts`] = HEADER + c.good;
      files[`contract-case-${i}-defect.ts`] = HEADER + c.defect;
    });
    const found = typeCheck(files);
    CASES.forEach((c, i) => {
      assert.deepEqual(found.get(`contract-case-${i}-good.ts`), [], `${c.name}: the program without the defect must compile`);
      const errors = found.get(`contract-case-${i}-defect.ts`)!;
      assert.ok(
        errors.some((e) => c.error.test(e)),
        `${c.name}: expected ${c.error}, got ${JSON.stringify(errors)}`,
      );
    });
  });
});
