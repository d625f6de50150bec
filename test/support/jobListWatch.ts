/** Test helper: `GET /v1/jobs/watch` read with node:http, recording each announced version as it arrives. */
import assert from "node:assert/strict";
import http from "node:http";
import type { JobListVersion } from "../../sdk/api/jobs.js";
import { SseParser } from "../../sdk/sseParser.js";
import type { Account } from "./api.js";

export interface JobListWatch {
  /** Every `version` announced so far, in order. */
  versions: JobListVersion[];
  close(): void;
}

/** Opens the watch with node:http and records announcements as they arrive (synchronously, as the studio does). */
export function watchJobList(cloud: { cloudUrl: string }, account: Account): Promise<JobListWatch> {
  return new Promise((resolve, reject) => {
    const versions: JobListVersion[] = [];
    const request = http.get(
      `${cloud.cloudUrl}/v1/jobs/watch?projectId=${account.projectId}`,
      { headers: { authorization: `Bearer ${account.token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
        assert.match(String(res.headers["content-type"]), /^text\/event-stream/);
        const parser = new SseParser();
        res.setEncoding("utf8");
        res.on("data", (text: string) => {
          for (const message of parser.feed(text)) if (message.event === "version") versions.push(JSON.parse(message.data));
          if (versions.length > 0) resolve({ versions, close: () => request.destroy() });
        });
      },
    );
    request.on("error", reject);
  });
}
