/**
 * A query string's values are strings on the wire: a parameter the contract declares as a number or a boolean is read
 * from its one canonical spelling ("12", "-3", "0.5", "true"), never guessed from " 12", "1e1", "0x0c" or "12.0".
 * Anything else stays the string it was, so validation answers the parameter's own 400.
 */
import type { TSchema } from "@sinclair/typebox";

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;

function parseValue(schema: TSchema | undefined, value: unknown): unknown {
  if (typeof value !== "string" || !schema) return value;
  const type: unknown = schema.type;
  if (type === "integer" && INTEGER.test(value)) return Number(value);
  if (type === "number" && NUMBER.test(value)) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** The query with its declared numbers and booleans read strictly; other values (strings, repeated parameters) as they came. */
export function parseQueryStrictly(schema: TSchema, query: unknown): unknown {
  if (!query || typeof query !== "object") return query;
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const parsed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) parsed[name] = parseValue(properties[name], value);
  return parsed;
}
