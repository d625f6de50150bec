/**
 * An HTTP route declared once (ARCHITECTURE.md, "One contract for the API"): servers take their validation and handler
 * types from it (server-shared/serveRoute.ts), clients their methods. Path parameters are strings named by the path.
 */
import type { Static, TObject, TSchema } from "@sinclair/typebox";

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/**
 * How a route answers when not with JSON: `file`, bytes to save under the name its Content-Disposition gives (an
 * adapter); `event-stream`, Server-Sent Events. Clients read such a body themselves, so it gets no JSON method.
 */
export type Produces = "file" | "event-stream";

/** Where a client puts its project: the query or the body; with `?` only when it has one. */
export type ProjectScope = "query" | "query?" | "body" | "body?";

/** The `:name` segments of a path: "/v1/deployments/:id/keys/:keyId" -> "id" | "keyId". */
export type PathParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParamNames<Rest>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** What one call sends: the path's parameters, and the body when the route takes one (less the project the client adds). */
export type Parts<P extends string, B, J = undefined> = ([PathParamNames<P>] extends [never]
  ? { params?: undefined }
  : { params: Record<PathParamNames<P>, string> }) &
  (B extends TSchema ? { body: J extends "body" | "body?" ? Omit<Static<B>, "projectId"> : Static<B> } : { body?: undefined });

/**
 * A declared route. `query`, `body` and `response` are TypeBox schemas, undefined when it has none (no response: 204, or
 * a stream its code reads); `status` is the success status when not 200; `project` where a client puts its project;
 * `args` turns the derived client method's arguments into the call's parts (none: it takes no arguments).
 */
export interface Route<
  P extends string = string,
  Q = TObject | undefined,
  B = TSchema | undefined,
  S = TSchema | undefined,
  A extends unknown[] = [],
  J = ProjectScope | undefined,
  F extends Produces | undefined = undefined,
> {
  method: Method;
  path: P;
  query: Q;
  body: B;
  response: S;
  status?: 201 | 204;
  project?: J;
  /** Set when the answer is not JSON (a file, an event stream): `response` is then undefined. */
  produces?: F;
  args?: (...args: A) => Parts<P, B, J>;
}

/** The widest route, for constraints. */
export type AnyRoute = Omit<Route<string, any, any, any, any, any, any>, "args"> & { args?: (...args: any[]) => CallParts };
export type Routes = Record<string, AnyRoute>;

export type ArgsOf<R extends AnyRoute> = R["args"] extends ((...args: infer A) => unknown) | undefined ? A : [];
export type ParamsOf<R extends AnyRoute> = Record<PathParamNames<R["path"]>, string>;
export type QueryOf<R extends AnyRoute> = R["query"] extends TSchema ? Static<R["query"]> : Record<string, never>;
export type BodyOf<R extends AnyRoute> = R["body"] extends TSchema ? Static<R["body"]> : unknown;
export type ResponseOf<R extends AnyRoute> = R["response"] extends TSchema ? Static<R["response"]> : void;
/** The parts of a call as a client builds them (`args`) and a server relays them. */
export type CallParts = { params?: Record<string, string>; body?: unknown };

/** The keys of the routes that answer JSON (or nothing): the others' bodies are read by hand. */
export type JsonRouteKeys<T extends Routes> = { [K in keyof T]: [NonNullable<T[K]["produces"]>] extends [never] ? K : never }[keyof T];

/** One method per JSON route, named by its key: `client.getJob(jobId)`. A route that `produces` a file or a stream gets none. */
export type RouteMethods<T extends Routes> = { [K in JsonRouteKeys<T>]: (...args: ArgsOf<T[K]>) => Promise<ResponseOf<T[K]>> };

/** Declares a route: path (P), query (Q), body (B) and response (S) schemas, the client method's arguments (A) and project scope (J). */
export function route<
  const P extends string,
  Q extends TObject | undefined = undefined,
  B extends TSchema | undefined = undefined,
  S extends TSchema | undefined = undefined,
  A extends unknown[] = [],
  const J extends ProjectScope | undefined = undefined,
  const F extends Produces | undefined = undefined,
>(spec: {
  method: Method;
  path: P;
  query?: Q;
  body?: B;
  response?: S;
  status?: 201 | 204;
  project?: J;
  produces?: F;
  args?: (...args: A) => Parts<P, B, J>;
}): Route<P, Q, B, S, A, J, F> {
  return spec as Route<P, Q, B, S, A, J, F>;
}

/** `unknown` when two paths name the same parameters, else `never` (so a mismatched path does not compile). */
type SameParams<P extends string, Q extends string> = [PathParamNames<P>] extends [PathParamNames<Q>]
  ? [PathParamNames<Q>] extends [PathParamNames<P>]
    ? unknown
    : never
  : never;

/**
 * The same call under another path naming the same parameters, without the project scope (the studio relaying the
 * cloud); `args` when its method takes other arguments.
 */
export function relay<R extends AnyRoute, const P extends string, A extends unknown[] = ArgsOf<R>>(
  of: R,
  path: P & SameParams<P, R["path"]>,
  args?: (...args: A) => Parts<P, R["body"]>,
): Route<P, undefined, R["body"], R["response"], A, undefined, R["produces"]> {
  return { ...of, path, query: undefined, project: undefined, ...(args ? { args } : {}) } as unknown as Route<
    P,
    undefined,
    R["body"],
    R["response"],
    A,
    undefined,
    R["produces"]
  >;
}

/** Fills a path's `:name` segments: ("/v1/jobs/:id", { id: "a b" }) -> "/v1/jobs/a%20b". */
export function pathOf(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name]));
}

/**
 * Gives a class one method per route (declare them with `interface X extends RouteMethods<typeof routes> {}`):
 * each turns its arguments into the call's parts with the route's `args` and hands them to `invoke`.
 */
export function installRouteMethods<T>(
  prototype: T,
  routes: Routes,
  invoke: (self: T, route: AnyRoute, parts: CallParts, name: string) => Promise<unknown>,
): void {
  for (const [name, declared] of Object.entries(routes)) {
    if (declared.produces) continue; // a file or a stream: its body is read by hand
    const value = function (this: T, ...args: unknown[]) {
      return invoke(this, declared, declared.args?.(...args) ?? {}, name);
    };
    Object.defineProperty(prototype, name, { value, configurable: true, writable: true });
  }
}
