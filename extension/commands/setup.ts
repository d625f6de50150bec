/** Readable reasons a command cannot run yet, matching the welcome view's states. */
import type { ProjectState } from "../core/projectState.js";

export function setupProblem(state: ProjectState): string | undefined {
  switch (state) {
    case "noFolder":
      return "Open a folder with an svc project first.";
    case "noProject":
      return "This folder has no svc project (src/svc/index.ts). Run “svc init” to create one.";
    case "noCli":
      return "The svc CLI was not found in node_modules/.bin or on PATH. Install it with “npm i -D svc-studio” (the package that provides the svc command).";
    case "noCredentials":
      return "No svc credentials yet: sign in or continue anonymously from the svc view.";
    default:
      return undefined;
  }
}
