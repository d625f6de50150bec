/**
 * Signals between cloud instances that share one PostgreSQL database: PostgreSQL's LISTEN/NOTIFY
 * on one channel, JSON payloads `{ topic, from, ... }`. The database stays the source of truth;
 * a signal only says "look again" (new job events, a changed job list, a changed deployment, a queued job, a cancel,
 * the jobs a worker link holds), so a lost signal costs latency, never data. After the listening
 * connection drops and comes back, `resync` handlers run: whatever was signalled meanwhile is
 * treated as unknown and re-read.
 *
 * SQLite has exactly one instance per data dir (cloud/lock.ts), so there it is a no-op.
 */
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Store } from "./db.js";

const CHANNEL = "svc_cluster";
/** PostgreSQL refuses NOTIFY payloads from 8000 bytes on; lists are split below that. */
const MAX_PAYLOAD = 7000;
const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5000;

export type ClusterTopic = "events" | "joblist" | "deployment" | "queued" | "cancel" | "holding";
export type SignalHandler = (message: Record<string, unknown>) => void;

export interface ClusterSignals {
  /** True where other instances may exist (PostgreSQL). */
  readonly shared: boolean;
  /** This process's id in payloads, so an instance can skip what it already did itself. */
  readonly instanceId: string;
  /** Tells every instance (this one included) about `topic`. Never rejects: a lost signal only delays. */
  signal(topic: ClusterTopic, message?: Record<string, unknown>): Promise<void>;
  /** Signals a list (job ids) under `key`, split into payloads that fit. */
  signalList(topic: ClusterTopic, key: string, items: readonly string[]): Promise<void>;
  /** Handles `topic` signals from other instances (own signals are not delivered). */
  on(topic: ClusterTopic, handler: SignalHandler): void;
  /** Runs after the listening connection came back: signals may have been missed. */
  onResync(handler: () => void): void;
  close(): Promise<void>;
}

/** The single-instance (SQLite) signals: nothing to tell anyone. */
export function localOnlySignals(): ClusterSignals {
  return {
    shared: false,
    instanceId: randomUUID(),
    signal: async () => undefined,
    signalList: async () => undefined,
    on: () => undefined,
    onResync: () => undefined,
    close: async () => undefined,
  };
}

export async function postgresSignals(databaseUrl: string, db: Store, log: (line: string) => void): Promise<ClusterSignals> {
  const { default: pg } = await import("pg");
  const instanceId = randomUUID();
  const handlers = new Map<string, SignalHandler[]>();
  const resyncHandlers: (() => void)[] = [];
  let client: InstanceType<typeof pg.Client> | undefined;
  let closed = false;
  let failures = 0;

  const deliver = (payload: string | undefined) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(payload ?? "");
    } catch {
      return;
    }
    if (message.from === instanceId) return;
    for (const handler of handlers.get(String(message.topic)) ?? []) {
      try {
        handler(message);
      } catch (err) {
        log(`cluster signal ${String(message.topic)} failed: ${(err as Error).message}`);
      }
    }
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on("notification", (n) => deliver(n.payload));
    next.on("error", () => undefined); // `end` follows and reconnects
    next.on("end", () => {
      if (closed || client !== next) return;
      client = undefined;
      scheduleReconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${CHANNEL}`);
    client = next;
  };

  const scheduleReconnect = () => {
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** failures) * (0.5 + Math.random() / 2);
    failures++;
    const timer = setTimeout(() => {
      if (closed) return;
      connect().then(
        () => {
          failures = 0;
          log("cluster signals: listening again; re-reading what may have changed meanwhile");
          for (const handler of resyncHandlers) handler();
        },
        (err) => {
          log(`cluster signals: reconnect failed (${(err as Error).message}); retrying`);
          scheduleReconnect();
        },
      );
    }, delay);
    timer.unref();
  };

  await connect();

  const send = async (payload: Record<string, unknown>) => {
    try {
      await sql`select pg_notify(${CHANNEL}, ${JSON.stringify(payload)})`.execute(db);
    } catch (err) {
      if (!closed) log(`cluster signal ${String(payload.topic)} not sent: ${(err as Error).message}`);
    }
  };

  return {
    shared: true,
    instanceId,
    signal: (topic, message = {}) => send({ ...message, topic, from: instanceId }),
    async signalList(topic, key, items) {
      let chunk: string[] = [];
      let size = 0;
      for (const item of items) {
        if (size + item.length + 3 > MAX_PAYLOAD && chunk.length > 0) {
          await send({ topic, from: instanceId, [key]: chunk });
          chunk = [];
          size = 0;
        }
        chunk.push(item);
        size += item.length + 3;
      }
      if (chunk.length > 0) await send({ topic, from: instanceId, [key]: chunk });
    },
    on(topic, handler) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    onResync(handler) {
      resyncHandlers.push(handler);
    },
    async close() {
      closed = true;
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
