/**
 * The compare view's config table: each job's trainer configuration (`Job.config`) flattened to
 * dotted keys (`lora.r`), one row per key across the jobs, flagged where the values differ.
 */

/** A config value as the table shows it: strings as they are, everything else as compact JSON. */
export function configValueText(value: unknown): string {
  return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}

/**
 * `{lora: {r: 8}}` -> `{"lora.r": "8"}`. Arrays stay whole (`["q_proj","v_proj"]`): a list of
 * target modules reads better as one value than as one row per index.
 */
export function flattenConfig(config: Record<string, unknown>, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(config)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
      for (const [k, v] of flattenConfig(value as Record<string, unknown>, path)) out.set(k, v);
    } else if (value !== undefined) {
      out.set(path, configValueText(value));
    }
  }
  return out;
}

export interface ConfigRow {
  key: string;
  /** One per job, in the jobs' order; undefined where that job's config has no such key. */
  values: (string | undefined)[];
  /** Not every job has the same value (a missing key counts as a different value). */
  differs: boolean;
}

/** Rows for every key any config has, in first-seen order (the first job's order, then new keys of the next). */
export function compareConfigs(configs: readonly Record<string, unknown>[]): ConfigRow[] {
  const flat = configs.map((c) => flattenConfig(c ?? {}));
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const map of flat) {
    for (const key of map.keys()) {
      if (!seen.has(key)) {
        seen.add(key);
        keys.push(key);
      }
    }
  }
  return keys.map((key) => {
    const values = flat.map((map) => map.get(key));
    return { key, values, differs: values.some((v) => v !== values[0]) };
  });
}
