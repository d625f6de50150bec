/**
 * `POST /api/inference/chat` → the cloud's `POST /v1/inference/chat`, streamed back unchanged.
 *
 * The SDK's CloudClient has no streaming call for this route yet, so this module sends the one
 * request itself with the session's credentials; an expired OAuth access token is refreshed by
 * making one cheap client call (`GET /v1/me`, which refreshes on 401) and retrying once.
 */
import { readCredentials, type Credentials } from "../sdk/credentials.js";
import { ApiError } from "../sdk/errors.js";
import type { ProjectSession } from "../sdk/session.js";
import { ConnectionError } from "../sdk/errors.js";

const bearer = (credentials: Credentials) => (credentials.kind === "anonymous" ? credentials.token : credentials.accessToken);

export async function openInferenceStream(session: ProjectSession, body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
  const send = async (): Promise<Response> => {
    const credentials = await readCredentials();
    if (!credentials) throw new ApiError(401, "unauthorized", "no credentials: run `svc login`, or reload the studio to create anonymous ones");
    try {
      return await fetch(`${session.cloudUrl.replace(/\/+$/, "")}/v1/inference/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearer(credentials)}`, "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new ConnectionError(session.cloudUrl, err);
    }
  };
  let response = await send();
  if (response.status === 401 && session.credentialKind === "oauth") {
    await response.body?.cancel();
    await session.client().me().catch(() => undefined); // refreshes and rewrites the credentials file
    response = await send();
  }
  if (!response.ok) {
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the fallback message below says what failed
    }
    throw ApiError.from(response.status, parsed, text.trim() || `POST /v1/inference/chat failed with HTTP ${response.status}`);
  }
  return response;
}
