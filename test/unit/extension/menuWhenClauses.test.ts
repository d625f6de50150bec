/**
 * The `when` clauses of package.json's menus, evaluated as VS Code does (`!` binds tighter than `&&`, which binds
 * tighter than `||`), for each of our views and each project state: a view's title buttons show on that view only
 * (issue 26: `view == svc.jobs && svc.state == ready || svc.state == noTrainer` showed Run Training on every view of
 * a project without a trainer).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ProjectState } from "../../../extension/core/projectState.js";

type Context = Record<string, string | boolean | undefined>;

/** A parser and evaluator for the subset of VS Code's when-clause language that package.json uses. */
function evaluateWhen(clause: string, context: Context): boolean {
  const tokens = clause.match(/\(|\)|&&|\|\||!=|==|=~|!|\/(?:\\.|[^/\\])+\/[a-z]*|[^\s()!=&|~]+/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected))
      throw new Error(`when clause ${JSON.stringify(clause)}: expected ${expected ?? "a token"} at ${at}, got ${token}`);
    return token;
  };
  const or = (): boolean => {
    let value = and();
    while (peek() === "||") {
      take();
      const right = and();
      value = value || right;
    }
    return value;
  };
  const and = (): boolean => {
    let value = unary();
    while (peek() === "&&") {
      take();
      const right = unary();
      value = value && right;
    }
    return value;
  };
  const unary = (): boolean => {
    if (peek() === "!") {
      take();
      return !unary();
    }
    return primary();
  };
  const primary = (): boolean => {
    if (peek() === "(") {
      take();
      const value = or();
      take(")");
      return value;
    }
    const key = take();
    if (key === "true") return true;
    if (key === "false") return false;
    const op = peek();
    if (op === "==" || op === "!=") {
      take();
      const equal = String(context[key]) === take();
      return op === "==" ? equal : !equal;
    }
    if (op === "=~") {
      take();
      const literal = take();
      const end = literal.lastIndexOf("/");
      return new RegExp(literal.slice(1, end), literal.slice(end + 1)).test(String(context[key] ?? ""));
    }
    return Boolean(context[key]);
  };
  const value = or();
  if (at !== tokens.length) throw new Error(`when clause ${JSON.stringify(clause)}: unexpected ${tokens[at]}`);
  return value;
}

interface MenuEntry {
  command: string;
  when?: string;
}

const manifest = JSON.parse(readFileSync(path.join(process.cwd(), "package.json"), "utf8")) as {
  contributes: { menus: Record<string, MenuEntry[]>; views: Record<string, { id: string }[]> };
};
const views = Object.values(manifest.contributes.views)
  .flat()
  .map((view) => view.id);
const STATES: (ProjectState | undefined)[] = ["noFolder", "noProject", "noCli", "noCredentials", "noTrainer", "ready", undefined];
/** The project states in which the project's actions (train, deploy, open) are offered: projectState.ts's `hasProject`. */
const PROJECT_STATES = new Set<ProjectState | undefined>(["ready", "noTrainer"]);

/** The views and states where an entry shows. */
function shownOn(entry: MenuEntry, extra: Context = {}): { view: string; state: ProjectState | undefined }[] {
  const shown: { view: string; state: ProjectState | undefined }[] = [];
  for (const view of views)
    for (const state of STATES) if (evaluateWhen(entry.when ?? "true", { view, "svc.state": state, ...extra })) shown.push({ view, state });
  return shown;
}

describe("package.json menus: when clauses", () => {
  it("the evaluator reads && before || and honours parentheses and !", () => {
    assert.equal(evaluateWhen("a == 1 && b == 2 || c == 3", { a: "0", b: "0", c: "3" }), true);
    assert.equal(evaluateWhen("a == 1 && (b == 2 || c == 3)", { a: "0", b: "0", c: "3" }), false);
    assert.equal(evaluateWhen("!x && viewItem =~ /^svc\\.job\\./", { x: false, viewItem: "svc.job.done" }), true);
    assert.equal(evaluateWhen("a != 1 || false", { a: "1" }), false);
  });

  it("each view's title buttons show on that view only, and the project's actions only with a project", () => {
    /** The view each title button belongs to (both: refresh), and whether it needs a project (ready or noTrainer). */
    const expected: Record<string, { views: string[]; needsProject: boolean }> = {
      "svc.runTraining": { views: ["svc.jobs"], needsProject: true },
      "svc.refresh": { views: ["svc.jobs", "svc.endpoints"], needsProject: false },
      "svc.createEndpoint": { views: ["svc.endpoints"], needsProject: true },
      "svc.openStudioInBrowser": { views: ["svc.jobs"], needsProject: true },
      "svc.compareJobs": { views: ["svc.jobs"], needsProject: true },
      "svc.previewDatasets": { views: ["svc.jobs"], needsProject: true },
      "svc.openPlayground": { views: ["svc.jobs"], needsProject: true },
    };
    const entries = manifest.contributes.menus["view/title"]!;
    assert.deepEqual(entries.map((e) => e.command).sort(), Object.keys(expected).sort(), "a new title button needs its line in this table");
    for (const entry of entries) {
      const want = expected[entry.command]!;
      const shown = shownOn(entry);
      const wantShown = views.flatMap((view) =>
        STATES.filter((state) => want.views.includes(view) && (!want.needsProject || PROJECT_STATES.has(state))).map((state) => ({ view, state })),
      );
      assert.deepEqual(shown, wantShown, `${entry.command}: when ${JSON.stringify(entry.when)}`);
    }
  });

  it("an item's context action shows only on the view its clause names", () => {
    const items = [
      "svc.job.running",
      "svc.job.queued",
      "svc.job.completed",
      "svc.job.failed",
      "svc.endpoint.enabled",
      "svc.endpoint.disabled",
      "svc.key.active",
    ];
    for (const entry of manifest.contributes.menus["view/item/context"]!) {
      const named = views.filter((view) => entry.when?.includes(`view == ${view}`));
      assert.equal(named.length, 1, `${entry.command}: when ${JSON.stringify(entry.when)} names no single view`);
      for (const viewItem of items) {
        for (const listMultiSelection of [false, true]) {
          const elsewhere = shownOn(entry, { viewItem, listMultiSelection }).filter((s) => s.view !== named[0]);
          assert.deepEqual(elsewhere, [], `${entry.command} on ${viewItem}: when ${JSON.stringify(entry.when)}`);
        }
      }
    }
  });
});
