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
    type Annotated = (typeof errors)[number] & { parentSchema?: { errorMessage?: string } };
    // A failed union reports each branch and then the union itself; the annotated one names the field.
    const custom = (errors as Annotated[]).find((e) => e.parentSchema?.errorMessage)?.parentSchema?.errorMessage;
    if (custom) return new Error(custom);
    const first = errors[0];
    const field = (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
    if (first?.keyword === "required") return new Error(`${(first.params as { missingProperty: string }).missingProperty} is required`);
    return new Error(`${field || dataVar} ${first?.message ?? "is invalid"}`);
  },
};
