/**
 * What a panel's requests do on the host: each `api/<name>` request is the same studio call the SPA
 * makes (through the same HttpTransport, so both surfaces share one code path and one error
 * envelope), one per route of the studio's contract; and streams are the studio's streams read in the host.
 */
import { studioApi } from "../../sdk/api/studio.js";
import type { HttpTransport } from "../../ui-shared/studioHttpClient.js";
import { callParts } from "../../ui-shared/protocol/common.js";
import type { RequestHandlers, StreamRunner } from "./panelConnection.js";
import { streamJobEvents } from "./jobEventStream.js";

export interface StudioEndpoint {
  url: string;
  token: string;
  api: HttpTransport;
}

/** What a panel changed, so the trees (and other panels) can reload. */
export type PanelChange = { kind: "job"; id: string } | { kind: "deployment"; id: string };

export function panelRequestHandlers(
  studio: () => Promise<StudioEndpoint>,
  copyText: (text: string) => Promise<void>,
  onChange: (change: PanelChange) => void = () => {},
): RequestHandlers {
  const handlers: Record<string, (params: Record<string, unknown>) => Promise<unknown>> = {
    "host/copyText": async ({ text }) => {
      await copyText(String(text));
      return null;
    },
  };
  for (const [name, route] of Object.entries(studioApi)) {
    handlers[`api/${name}`] = async (params) => {
      const parts = callParts(params);
      const result = await (await studio()).api.call(route, parts);
      // A call that is not a GET changed the job or deployment it names (or created), so trees and panels reload.
      const id = parts.params?.id ?? (result as { id?: string } | undefined)?.id;
      if (route.method !== "GET" && id) {
        if (route.path.startsWith("/api/jobs")) onChange({ kind: "job", id });
        else if (route.path.startsWith("/api/deployments")) onChange({ kind: "deployment", id });
      }
      return result ?? null;
    };
  }
  return handlers as unknown as RequestHandlers;
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
