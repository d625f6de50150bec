/**
 * Which JSON Schemas the grammar compiler (node-llama-cpp's GBNF generator) can enforce. It
 * quietly accepts what it does not understand (an unknown `type` becomes "anything"), so a
 * schema is checked here first: a keyword that would constrain the output but cannot be enforced
 * is refused by name rather than silently ignored.
 */

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
/** Keywords the compiler enforces. */
const ENFORCED = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'format',
  '$defs',
  'definitions',
  '$ref',
  'minProperties',
  'maxProperties',
]);
/** Keywords that document rather than constrain: harmless to pass over. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'strict']);
const FORMATS = new Set(['date', 'time', 'date-time']);

/** The first unsupported part of a schema as "where: what", or null when all of it is enforced. */
export function unsupportedSchemaPart(schema: unknown, where = 'schema'): string | null {
  if (typeof schema === 'boolean') return null;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return `${where}: must be an object`;
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) {
    if (!ENFORCED.has(key) && !ANNOTATIONS.has(key)) return `${where}: keyword "${key}" cannot be enforced`;
  }
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  for (const type of types) if (typeof type !== 'string' || !TYPES.has(type)) return `${where}.type: unknown type ${JSON.stringify(type)}`;
  if (node.format !== undefined && !FORMATS.has(node.format as string))
    return `${where}.format: "${String(node.format)}" cannot be enforced (date, time and date-time can)`;
  if (node.anyOf !== undefined && node.oneOf !== undefined) return `${where}: anyOf beside oneOf cannot be enforced`;
  if (typeof node.$ref === 'string' && !/^#\/(\$defs|definitions)\/[^/]+$/.test(node.$ref))
    return `${where}.$ref: only local references to #/$defs/<name> are supported`;
  const children: Array<[string, unknown]> = [];
  for (const key of ['properties', '$defs', 'definitions'] as const) {
    const map = node[key];
    if (map === undefined) continue;
    if (!map || typeof map !== 'object' || Array.isArray(map)) return `${where}.${key}: must be an object`;
    for (const [name, child] of Object.entries(map)) children.push([`${where}.${key}.${name}`, child]);
  }
  for (const key of ['anyOf', 'oneOf', 'prefixItems'] as const) {
    const list = node[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `${where}.${key}: must be an array`;
    list.forEach((child, i) => children.push([`${where}.${key}[${i}]`, child]));
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    if (node[key] !== undefined) children.push([`${where}.${key}`, node[key]]);
  }
  for (const [path, child] of children) {
    const problem = unsupportedSchemaPart(child, path);
    if (problem) return problem;
  }
  return null;
}

/**
 * The schema as the grammar compiler must see it. node-llama-cpp's compiler does not know
 * `anyOf` and silently turns it into `null` (the output was always `null`); for a grammar,
 * `anyOf` and `oneOf` are the same alternation (neither can check "exactly one" while
 * generating), so `anyOf` is handed over as `oneOf`. Only schema positions are rewritten, never
 * a property that happens to be named "anyOf".
 */
export function grammarReadySchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const node = { ...(schema as Record<string, unknown>) };
  for (const key of ['properties', '$defs', 'definitions'] as const) {
    const map = node[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) {
      node[key] = Object.fromEntries(Object.entries(map).map(([name, child]) => [name, grammarReadySchema(child)]));
    }
  }
  for (const key of ['anyOf', 'oneOf', 'prefixItems'] as const) {
    if (Array.isArray(node[key])) node[key] = (node[key] as unknown[]).map(grammarReadySchema);
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    if (node[key] !== undefined) node[key] = grammarReadySchema(node[key]);
  }
  if (Array.isArray(node.anyOf)) {
    node.oneOf = Array.isArray(node.oneOf) ? node.oneOf : node.anyOf;
    delete node.anyOf;
  }
  return node;
}
