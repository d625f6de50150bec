/**
 * What a panel's requests do on the host: each `api/*` method is the same studio call the SPA
 * makes (through the same HttpTransport, so both surfaces share one code path and one error
 * envelope), and streams are the studio's streams read in the host.
 */
import { TransportError, type SaveFileRequest, type Transport } from "../../ui-shared/transport.js";
import type { RequestHandlers, StreamRunner } from "./panelConnection.js";
import { streamJobEvents } from "./jobEventStream.js";

export interface StudioEndpoint {
  url: string;
  token: string;
  api: Transport;
}

/** What the host does for a panel beyond the studio API (VS Code's clipboard, dialogs, other panels). */
export interface PanelHost {
  copyText(text: string): Promise<void>;
  /** Asks where to save and writes the file; the path written, or undefined when the user dismissed the dialog. */
  saveFile(file: SaveFileRequest): Promise<string | undefined>;
  /** Opens the browser studio at a hash route (VS Code has no Playground panel). */
  openInStudio(hash: string): Promise<void>;
  /** Opens (or focuses) a job's Job detail panel. */
  openJob(jobId: string): Promise<void>;
}

/** Hash routes a panel may open in the studio: the Playground with a job's adapter, nothing else. */
const STUDIO_HASH = /^#\/playground\?job=[\w%.-]+$/;

/** What a panel changed, so the trees (and other panels) can reload. */
export type PanelChange = { kind: "job"; id: string } | { kind: "deployment"; id: string };

export function panelRequestHandlers(studio: () => Promise<StudioEndpoint>, host: PanelHost, onChange: (change: PanelChange) => void = () => {}): RequestHandlers {
  const api = async () => (await studio()).api;
  /** Runs a mutating call and reports it once it succeeded. */
  const changing = async <T>(change: PanelChange, call: () => Promise<T>): Promise<T> => {
    const result = await call();
    onChange(change);
    return result;
  };
  return {
    "api/getManifest": async () => (await api()).getManifest(),
    "api/getEnvironment": async () => (await api()).getEnvironment(),
    "api/getTrainingStatus": async () => (await api()).getTrainingStatus(),
    "api/stopTraining": async () => (await api()).stopTraining(),
    "api/listJobs": async () => (await api()).listJobs(),
    "api/getJob": async ({ id }) => (await api()).getJob(id),
    "api/cancelJob": ({ id }) => changing({ kind: "job", id }, async () => (await api()).cancelJob(id)),
    "api/listArtifacts": async ({ jobId }) => (await api()).listArtifacts(jobId),
    "api/listModels": async () => (await api()).listModels(),
    "api/listDeployments": async () => (await api()).listDeployments(),
    "api/createDeployment": async ({ input }) => {
      const created = await (await api()).createDeployment(input);
      onChange({ kind: "deployment", id: created.id });
      return created;
    },
    "api/getDeployment": async ({ id }) => (await api()).getDeployment(id),
    "api/updateDeployment": ({ id, patch }) => changing({ kind: "deployment", id }, async () => (await api()).updateDeployment(id, patch)),
    "api/deleteDeployment": ({ id }) =>
      changing({ kind: "deployment", id }, async () => {
        await (await api()).deleteDeployment(id);
        return null;
      }),
    "api/listKeys": async ({ deploymentId }) => (await api()).listKeys(deploymentId),
    "api/issueKey": ({ deploymentId, label }) => changing({ kind: "deployment", id: deploymentId }, async () => (await api()).issueKey(deploymentId, label)),
    "api/revokeKey": ({ deploymentId, keyId }) =>
      changing({ kind: "deployment", id: deploymentId }, async () => {
        await (await api()).revokeKey(deploymentId, keyId);
        return null;
      }),
    "host/copyText": async ({ text }) => {
      await host.copyText(text);
      return null;
    },
    "host/saveFile": async (file) => ({ path: (await host.saveFile(file)) ?? null }),
    "host/openInStudio": async ({ hash }) => {
      // A webview's message decides only which job; the page it opens is fixed here.
      if (!STUDIO_HASH.test(hash)) throw new TransportError(400, "bad_request", `Not a studio page a panel may open: ${hash}`);
      await host.openInStudio(hash);
      return null;
    },
    "host/openJob": async ({ jobId }) => {
      await host.openJob(jobId);
      return null;
    },
  };
}

export function panelStreamRunner(studio: () => Promise<StudioEndpoint>): StreamRunner {
  return async (spec, sink, signal) => {
    const { url, token, api } = await studio();
    switch (spec.kind) {
      case "jobEvents":
        return streamJobEvents({ studioUrl: url, token, jobId: spec.jobId }, { event: sink.data, events: sink.data, interrupted: sink.interrupted }, signal);
      case "training":
        return api.runTraining(sink.data, signal);
      case "chat":
        return api.streamChat(spec.request, sink.data, signal);
    }
  };
}
