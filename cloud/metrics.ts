/** Prometheus metrics of one cloud process (own registry, so several clouds can share a process in tests). */
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface CloudMetrics {
  registry: Registry;
  httpRequests: Counter<"listener" | "method" | "status">;
  httpDuration: Histogram<"listener">;
  eventsAppended: Counter<"type">;
  sseClients: Counter<"kind">;
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
  };
}
