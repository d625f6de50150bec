/** Prometheus metrics of one cloud process (own registry, so several clouds can share a process in tests). */
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface CloudMetrics {
  registry: Registry;
  httpRequests: Counter<"listener" | "method" | "status">;
  httpDuration: Histogram<"listener">;
  eventsAppended: Counter<"type">;
  sseClients: Counter<"kind">;
  /** Edge requests made with a deployment key, labelled by deployment slug and key display prefix. */
  keyRequests: Counter<"deployment" | "key_prefix" | "status">;
  keyTokens: Counter<"deployment" | "key_prefix" | "kind">;
  keyLatency: Histogram<"deployment" | "key_prefix">;
  keyTimeToFirstToken: Histogram<"deployment" | "key_prefix">;
}

export function createMetrics(): CloudMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "svc_" });
  return {
    registry,
    httpRequests: new Counter({
      name: "svc_http_requests_total",
      help: "HTTP requests answered, by listener, method and status",
      labelNames: ["listener", "method", "status"],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: "svc_http_request_duration_seconds",
      help: "Time to answer an HTTP request",
      labelNames: ["listener"],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    eventsAppended: new Counter({
      name: "svc_job_events_appended_total",
      help: "Job events appended to the store, by type",
      labelNames: ["type"],
      registers: [registry],
    }),
    sseClients: new Counter({
      name: "svc_sse_streams_opened_total",
      help: "Server-sent event streams opened",
      labelNames: ["kind"],
      registers: [registry],
    }),
    keyRequests: new Counter({
      name: "svc_key_requests_total",
      help: "Edge requests made with a deployment key, by deployment, key prefix and status",
      labelNames: ["deployment", "key_prefix", "status"],
      registers: [registry],
    }),
    keyTokens: new Counter({
      name: "svc_key_tokens_total",
      help: "Tokens charged to deployment keys, by deployment, key prefix and kind (prompt, completion)",
      labelNames: ["deployment", "key_prefix", "kind"],
      registers: [registry],
    }),
    keyLatency: new Histogram({
      name: "svc_key_request_duration_seconds",
      help: "Time to answer an edge request made with a deployment key, to its last byte",
      labelNames: ["deployment", "key_prefix"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    keyTimeToFirstToken: new Histogram({
      name: "svc_key_time_to_first_token_seconds",
      help: "Time from an edge request made with a deployment key to its first generated text",
      labelNames: ["deployment", "key_prefix"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}
