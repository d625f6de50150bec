/**
 * Contract routes (sdk/api/) served on Fastify by the cloud and the studio: query and body validated, the handler typed
 * by the declaration (it returns the answer, or the reply it sent itself), the declared status set.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions, RouteShorthandOptions } from "fastify";
import type { AnyRoute, BodyOf, ParamsOf, QueryOf, ResponseOf, Routes } from "../sdk/api/route.js";
import { parseQueryStrictly } from "./strictQuery.js";

export type RouteRequest<R extends AnyRoute> = FastifyRequest<{ Params: ParamsOf<R>; Querystring: QueryOf<R>; Body: BodyOf<R> }>;
export type RouteHandler<R extends AnyRoute> = (request: RouteRequest<R>, reply: FastifyReply) => Promise<ResponseOf<R> | FastifyReply>;
/** One handler per declared route: a route without one, or one without a route, does not compile. */
export type RouteHandlers<T extends Routes> = { [K in keyof T]: RouteHandler<T[K]> };

/** Any Fastify app, whatever its type provider. */
type AnyApp = { route(options: never): unknown };
type RouteOptions = Pick<RouteShorthandOptions, "bodyLimit" | "config">;

export function serveRoute<R extends AnyRoute>(app: AnyApp, route: R, handler: RouteHandler<R>, options: RouteOptions = {}): void {
  (app as FastifyInstance).route({
    ...options,
    method: route.method,
    url: route.path,
    schema: { ...(route.query ? { querystring: route.query } : {}), ...(route.body ? { body: route.body } : {}) },
    // Validation coerces nothing (contractValidation): a query's numbers are read here, from their canonical spelling only.
    ...(route.query
      ? {
          preValidation: (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
            request.query = parseQueryStrictly(route.query, request.query);
            done();
          },
        }
      : {}),
    handler: (request, reply) => {
      if (route.status) reply.code(route.status);
      // An answer of undefined (204, or a reply already sent) is Fastify's to finish, as for any async handler.
      return handler(request as RouteRequest<R>, reply);
    },
  });
}

export function serveRoutes<T extends Routes>(
  app: AnyApp,
  routes: T,
  handlers: RouteHandlers<NoInfer<T>>,
  options: { [K in keyof T]?: RouteOptions } = {},
): void {
  for (const name of Object.keys(routes)) serveRoute(app, routes[name], handlers[name], options[name]);
}

/**
 * Fastify's ajv for the contract's schemas: their `errorMessage` annotation becomes the 400's message, else it names the
 * field. No type coercion (Fastify's default turns `"false"` into false and 123 into "123"): a body is JSON, typed by its
 * sender, and a value of the wrong type is a 400; query strings are read by serveRoute (strictQuery.ts).
 */
export const contractValidation: Pick<FastifyServerOptions, "ajv" | "schemaErrorFormatter"> = {
  ajv: {
    // verbose: the formatter below needs each error's parentSchema to read our errorMessage.
    customOptions: { allErrors: false, verbose: true, coerceTypes: false },
    plugins: [((ajv: { addKeyword(keyword: string): unknown }) => ajv.addKeyword("errorMessage")) as never],
  },
  schemaErrorFormatter(errors, dataVar) {
    const relevant = branchNamedByKind(errors as SchemaError[]);
    // A failed union reports each branch and then the union itself; the annotated one names the field.
    const custom = relevant.map(annotation).find((message) => message !== undefined);
    if (custom) return new Error(custom);
    const first = relevant[0];
    const field = (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
    if (first?.keyword === "required") return new Error(`${(first.params as { missingProperty: string }).missingProperty} is required`);
    return new Error(`${field || dataVar} ${first?.message ?? "is invalid"}`);
  },
};

/** An ajv error as `verbose` reports it: with the failing value and the schema that holds the failed keyword. */
type SchemaError = { keyword: string; instancePath: string; schemaPath: string; params: unknown; message?: string; data?: unknown; parentSchema?: Schema };
type Schema = { errorMessage?: string; anyOf?: Schema[]; properties?: Record<string, Schema>; const?: unknown };

/** The message a schema gives for its failure; a missing property's is that property's own. */
function annotation(error: SchemaError): string | undefined {
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return error.parentSchema?.properties?.[missing]?.errorMessage ?? error.parentSchema?.errorMessage;
  }
  return error.parentSchema?.errorMessage;
}

/**
 * A union of objects told apart by `kind` (a deployment target) that failed: the errors of the branch the value's kind
 * names, the others' being noise; none such, the union's own. Other failures are left as they are.
 */
function branchNamedByKind(errors: SchemaError[]): SchemaError[] {
  const union = errors[errors.length - 1];
  const branches = union?.keyword === "anyOf" ? union.parentSchema?.anyOf : undefined;
  if (!branches?.every((branch) => branch.properties?.kind?.const !== undefined)) return errors;
  const kind = (union.data as { kind?: unknown } | null)?.kind;
  const index = branches.findIndex((branch) => branch.properties?.kind?.const === kind);
  if (index < 0) return [union];
  return errors.filter((error) => error.schemaPath.startsWith(`${union.schemaPath}/${index}/`));
}
